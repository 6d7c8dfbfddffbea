import { retry, statementChunks, storeTraits } from '@vigil/proto/platform';
import type { AnyBulkWriteOperation, Collection, Db, Document } from 'mongodb';
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
 * `$inc` builds from the dotted paths.
 */
export function counterUpserts<T extends Document>(writes: readonly CounterWrite[]): AnyBulkWriteOperation<T>[] {
  return writes.map(
    (write) =>
      ({
        updateOne: {
          filter: { _id: write._id },
          update: { $inc: write.inc, $setOnInsert: write.setOnInsert },
          upsert: true,
        },
      }) as AnyBulkWriteOperation<T>,
  );
}

/**
 * Adds the writes to the counters in one bulk write (on FerretDB, a few statements to a command: see
 * statementChunks), each command retried as a whole, a few times, and only while the store is out of reach. A reply
 * lost after a command applied would count its writes twice: rare, and a count off by a few is better than a commit
 * that waits on its counters. Each writer updates its own documents, so no two writers contend.
 */
export async function writeCounters<T extends Document>(
  db: Db,
  counters: Collection<T>,
  writes: readonly CounterWrite[],
): Promise<void> {
  if (writes.length === 0) return;
  const chunks = statementChunks(await guarded(() => storeTraits(db)), counterUpserts<T>(writes));
  for (const ops of chunks) {
    await retry(() => guarded(() => counters.bulkWrite(ops, { ordered: true })), {
      backoff: { initialMs: 50, maxMs: 1000, jitter: 1 },
      maxAttempts: 3,
      retriable: (err) => err instanceof UnavailableError,
    });
  }
}
