import { isDuplicateKeyError } from './store-errors';

/**
 * Runs an upsert by `_id`, once more when it fails on a duplicate key. Two writers upserting the same new `_id` at once
 * both try to insert it and one loses: MongoDB retries such an upsert itself, FerretDB v1 does not. The second try
 * finds the document the other inserted and updates (or replaces) it.
 */
export async function upsertRetried<T>(upsert: () => Promise<T>): Promise<T> {
  try {
    return await upsert();
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
    return upsert();
  }
}
