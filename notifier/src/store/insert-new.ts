import { isDuplicateKeyError, upsertRetried } from '@vigil/proto';
import {
  MongoBulkWriteError,
  type Collection,
  type Filter,
  type OptionalUnlessRequiredId,
  type UpdateFilter,
} from 'mongodb';

/** Inserts documents unordered; returns the ids this call inserted, the rest having existed (duplicate key). */
export async function insertIgnoringDuplicates<T extends { _id: string }>(
  collection: Collection<T>,
  docs: T[],
): Promise<Set<string>> {
  const inserted = await insertEach(collection, docs);
  return new Set(docs.filter((_, index) => inserted[index]).map((doc) => doc._id));
}

/**
 * Inserts documents unordered; for each, whether this call inserted it (false: a document with its `_id` existed, or
 * came earlier in `docs`).
 */
export async function insertEach<T extends { _id: string }>(collection: Collection<T>, docs: T[]): Promise<boolean[]> {
  if (docs.length === 0) return [];
  try {
    await collection.insertMany(docs as OptionalUnlessRequiredId<T>[], { ordered: false });
    return docs.map(() => true);
  } catch (err) {
    if (!(err instanceof MongoBulkWriteError)) throw err;
    const errors = Array.isArray(err.writeErrors) ? err.writeErrors : [err.writeErrors];
    if (!errors.every((writeError) => isDuplicateKeyError(writeError))) throw err;
    const existing = new Set(errors.map((writeError) => (writeError as { index: number }).index));
    return docs.map((_, index) => !existing.has(index));
  }
}

/** `updateOne` with `upsert` by `_id`, tried once more on a duplicate key (see `upsertRetried`). */
export async function upsertById<T extends { _id: string }>(
  collection: Collection<T>,
  id: string,
  update: UpdateFilter<T>,
): Promise<void> {
  const filter = { _id: id } as Filter<T>;
  await upsertRetried(() => collection.updateOne(filter, update, { upsert: true }));
}
