import { isDuplicateKeyError } from '@vigil/proto/platform';

/**
 * True once a one-document write is done, false when it met a duplicate key (a document with its `_id` was already
 * there). Never for a bulk write: `isDuplicateKeyError` refuses its errors (see `insertEach` in @vigil/proto).
 */
export async function writtenUnlessDuplicate(insert: Promise<unknown>): Promise<boolean> {
  try {
    await insert;
    return true;
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
    return false;
  }
}

/**
 * Writes a document by a conditional replace or an insert, without an upsert (FerretDB answers an upsert with a
 * non-`_id` filter with a collection scan). Returns true when the document was inserted (there was none before).
 * `insert` answers false when a document with its `_id` was already there.
 */
export async function replaceOrInsert(
  insert: () => Promise<boolean>,
  replace: () => Promise<boolean>,
  insertFirst: boolean,
): Promise<boolean> {
  if (insertFirst) {
    if (await insert()) return true;
    await replace();
    return false;
  }
  if (await replace()) return false;
  if (await insert()) return true;
  // Another writer inserted between the replace and the insert; its version may be older than this one.
  await replace();
  return false;
}
