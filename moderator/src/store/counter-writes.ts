import { ulid } from '@vigil/proto';
import { isDuplicateKeyError, retry, statementChunks, storeTraits } from '@vigil/proto/platform';
import { MongoBulkWriteError, type AnyBulkWriteOperation, type Collection, type Db, type Document } from 'mongodb';
import { UnavailableError } from '../domain/errors';
import { guarded } from './mongo-errors';

/** One counter document's update: `$inc` by dotted path, and what an upsert creates it with. */
export interface CounterWrite<Insert extends Document = Document> {
  _id: string;
  inc: Record<string, number>;
  setOnInsert: Insert;
}

/**
 * The writes as upserts keyed by `_id` (an equality): `$inc` on the document if it exists, or a new one whose tree
 * `$inc` builds from the dotted paths. With `mark`, each write applies once: it stamps the document `applied: mark`,
 * and matches only a document without that stamp, so sent again it finds none and its upsert fails as a duplicate.
 */
export function counterUpserts<T extends Document>(
  writes: readonly CounterWrite[],
  mark?: string,
): AnyBulkWriteOperation<T>[] {
  return writes.map(
    (write) =>
      ({
        updateOne: {
          filter: mark ? { _id: write._id, applied: { $ne: mark } } : { _id: write._id },
          update: {
            $inc: write.inc,
            $setOnInsert: write.setOnInsert,
            ...(mark ? { $set: { applied: mark } } : {}),
          },
          upsert: true,
        },
      }) as AnyBulkWriteOperation<T>,
  );
}

/**
 * Adds the writes to the counters (on FerretDB, a few statements to a command: see statementChunks), each command
 * retried as a whole, a few times, and only while the store is out of reach. Each command's writes carry a mark of
 * their own (see counterUpserts), so a command sent again after its reply was lost adds nothing twice. Each writer
 * updates its own documents, one command at a time, so no two writers contend and a document's stamp is the last
 * command's.
 */
export async function writeCounters<T extends Document>(
  db: Db,
  counters: Collection<T>,
  writes: readonly CounterWrite[],
): Promise<void> {
  if (writes.length === 0) return;
  const traits = await guarded(() => storeTraits(db));
  for (const chunk of statementChunks(traits, [...writes])) {
    const ops = counterUpserts<T>(chunk, ulid());
    await retry(() => guarded(() => applyOnce(counters, ops)), {
      backoff: { initialMs: 50, maxMs: 1000, jitter: 1 },
      maxAttempts: 3,
      retriable: (err) => err instanceof UnavailableError,
    });
  }
}

/**
 * Sends the marked writes in order. An ordered bulk write stops at its first error (FerretDB v1 stops there even
 * unordered): a duplicate there is a write an earlier try applied, so the writes after it are sent on.
 */
async function applyOnce<T extends Document>(counters: Collection<T>, ops: AnyBulkWriteOperation<T>[]): Promise<void> {
  let rest = ops;
  while (rest.length > 0) {
    try {
      await counters.bulkWrite(rest, { ordered: true });
      return;
    } catch (err) {
      // A reset or a command-level error comes wrapped with no write error: nothing is known applied, so it throws.
      const first = err instanceof MongoBulkWriteError ? [err.writeErrors].flat()[0] : undefined;
      if (!first || !isDuplicateKeyError(first)) throw err;
      rest = rest.slice(first.index + 1);
    }
  }
}
