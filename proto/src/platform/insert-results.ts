import { MongoBulkWriteError } from 'mongodb';
import { isDuplicateKeyError } from './store-errors';

/**
 * What an insert did to one document: stored by this call, refused because a document with its key exists, or (an
 * ordered insert that stopped at a duplicate) never tried.
 */
export type InsertOutcome = 'inserted' | 'duplicate' | 'not_reached';

/** The one call of a collection these helpers make (a driver `Collection` satisfies it). */
export interface InsertsMany<T> {
  insertMany(docs: T[], options: { ordered: boolean }): Promise<unknown>;
}

/** The one call of a collection `insertUnlessExists` makes. */
export interface InsertsOne<T> {
  insertOne(doc: T): Promise<unknown>;
}

/**
 * What a failed `insertMany` of `count` documents proves about each of them, or undefined when it proves nothing.
 *
 * The driver wraps every error raised while a bulk insert runs in a `MongoBulkWriteError`: the per-document write
 * errors the server answered, but also a connection reset, a pool cleared or a command-level server error (then
 * `writeErrors` is empty, and which documents went in is unknown: FerretDB may have stored the first ones). So an
 * outcome is proven only when the server answered for every document: each write error is a duplicate key, at a
 * distinct index, and the documents it counts as inserted make up the rest. An ordered insert stops at its first error,
 * so there it must be one duplicate at index k with exactly k documents inserted before it. A write concern error
 * proves nothing either (the writes may not last).
 */
export function provenInsertOutcomes(err: unknown, count: number, ordered: boolean): InsertOutcome[] | undefined {
  const answered = answeredWriteErrors(err, count);
  if (!answered || ![...answered.errors.values()].every((duplicate) => duplicate)) return undefined;
  const { errors, inserted } = answered;
  if (ordered) {
    const [stop] = errors.keys();
    if (errors.size !== 1 || stop === undefined || inserted !== stop) return undefined;
    return Array.from({ length: count }, (_, i) => (i < stop ? 'inserted' : i === stop ? 'duplicate' : 'not_reached'));
  }
  if (inserted !== count - errors.size) return undefined;
  return Array.from({ length: count }, (_, i) => (errors.has(i) ? 'duplicate' : 'inserted'));
}

/**
 * What a failed unordered `insertMany` of `count` documents did to each when the server answered for every one, as
 * `provenInsertOutcomes` reads it, but with write errors other than a duplicate key too: `refused` for those (a
 * document the store cannot hold). Undefined when it proves nothing.
 */
export function answeredInsertOutcomes(
  err: unknown,
  count: number,
): Array<'inserted' | 'duplicate' | 'refused'> | undefined {
  const answered = answeredWriteErrors(err, count);
  if (!answered || answered.inserted !== count - answered.errors.size) return undefined;
  const { errors } = answered;
  return Array.from({ length: count }, (_, i) =>
    !errors.has(i) ? 'inserted' : errors.get(i) ? 'duplicate' : 'refused',
  );
}

/**
 * The write errors of a bulk insert the server answered, by document index (true for a duplicate key), and the count
 * it inserted; undefined when it answered for none (no write error: a reset or a command-level error), when a write
 * concern error makes the writes uncertain, or when an index is out of range or repeated.
 */
function answeredWriteErrors(
  err: unknown,
  count: number,
): { errors: Map<number, boolean>; inserted: number } | undefined {
  if (!(err instanceof MongoBulkWriteError)) return undefined;
  const result = err.result as MongoBulkWriteError['result'] | undefined;
  if (!result || result.getWriteConcernError() !== undefined) return undefined;
  const writeErrors = ([] as unknown[]).concat(err.writeErrors ?? []) as Array<{ code?: unknown; index?: unknown }>;
  if (writeErrors.length === 0) return undefined;
  const errors = new Map<number, boolean>();
  for (const writeError of writeErrors) {
    const { index } = writeError;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count || errors.has(index))
      return undefined;
    errors.set(index, isDuplicateKeyError(writeError));
  }
  return { errors, inserted: result.insertedCount };
}

/**
 * Inserts documents unordered; for each, whether this call inserted it (false: a document with its key existed, or
 * came earlier in `docs`). Throws the store's error unless the server answered for every document (see
 * `provenInsertOutcomes`): a command whose reply was lost, or that failed part way, is never counted as done.
 */
export async function insertEach<T>(collection: InsertsMany<T>, docs: T[]): Promise<boolean[]> {
  if (docs.length === 0) return [];
  try {
    await collection.insertMany(docs, { ordered: false });
    return docs.map(() => true);
  } catch (err) {
    const outcomes = provenInsertOutcomes(err, docs.length, false);
    if (!outcomes) throw err;
    return outcomes.map((outcome) => outcome === 'inserted');
  }
}

/**
 * Inserts documents in order, stopping at the first whose key exists; returns how many went in before it (all of
 * them when none existed). Throws the store's error for anything else (see `provenInsertOutcomes`).
 */
export async function insertInOrder<T>(collection: InsertsMany<T>, docs: T[]): Promise<number> {
  if (docs.length === 0) return 0;
  try {
    await collection.insertMany(docs, { ordered: true });
    return docs.length;
  } catch (err) {
    const outcomes = provenInsertOutcomes(err, docs.length, true);
    if (!outcomes) throw err;
    return outcomes.indexOf('duplicate');
  }
}

/**
 * Inserts one document; true when this call inserted it, false when a document with its key existed. A lost reply
 * throws: a retry then answers false for a document that the lost call did insert, so callers treat false as "exists",
 * never as "someone else's".
 */
export async function insertUnlessExists<T>(collection: InsertsOne<T>, doc: T): Promise<boolean> {
  try {
    await collection.insertOne(doc);
    return true;
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
    return false;
  }
}
