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
  if (docs.length === 0) return new Set();
  try {
    await collection.insertMany(docs as OptionalUnlessRequiredId<T>[], { ordered: false });
    return new Set(docs.map((doc) => doc._id));
  } catch (err) {
    if (!(err instanceof MongoBulkWriteError)) throw err;
    const errors = Array.isArray(err.writeErrors) ? err.writeErrors : [err.writeErrors];
    if (!errors.every((writeError) => (writeError as { code?: unknown }).code === 11000)) throw err;
    const existing = new Set(errors.map((writeError) => (writeError as { index: number }).index));
    return new Set(docs.filter((_, index) => !existing.has(index)).map((doc) => doc._id));
  }
}

/**
 * `updateOne` with `upsert`, tried once more when it fails on a duplicate key: two writers upserting the same new `_id`
 * at once both try to insert it, and one loses (MongoDB retries such an upsert itself, FerretDB does not); the second
 * try finds the document the other inserted and updates it.
 */
export async function upsertById<T extends { _id: string }>(
  collection: Collection<T>,
  id: string,
  update: UpdateFilter<T>,
): Promise<void> {
  const filter = { _id: id } as Filter<T>;
  try {
    await collection.updateOne(filter, update, { upsert: true });
  } catch (err) {
    if ((err as { code?: unknown }).code !== 11000) throw err;
    await collection.updateOne(filter, update, { upsert: true });
  }
}
