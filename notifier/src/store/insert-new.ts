import { insertEach, upsertRetried, type InsertsMany } from '@vigil/proto/platform';
import { type Collection, type Filter, type UpdateFilter } from 'mongodb';

/** Inserts documents unordered; returns the ids this call inserted, the rest having existed (duplicate key). */
export async function insertIgnoringDuplicates<T extends { _id: string }>(
  collection: Collection<T>,
  docs: T[],
): Promise<Set<string>> {
  const inserted = await insertEach(collection as unknown as InsertsMany<T>, docs);
  return new Set(docs.filter((_, index) => inserted[index]).map((doc) => doc._id));
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
