import { MongoBulkWriteError } from 'mongodb';

// For specs: bulk write errors exactly as the driver builds them. Its own bulk machinery (not part of its typed public
// API) is called as the driver calls it in `executeCommands` (mongodb/lib/bulk/common.js), on the replies a server gives.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const bulk = require('mongodb/lib/bulk/common') as {
  Batch: new (type: number, originalZeroIndex: number) => { operations: unknown[]; originalIndexes: number[] };
  BatchType: { INSERT: number };
  BulkWriteResult: new (bulkResult: unknown, ordered: boolean) => unknown;
  mergeBatchResults: (batch: unknown, bulkResult: unknown, err: unknown, reply: unknown) => void;
};

export interface BulkReply {
  ok: 1 | 0;
  n?: number;
  code?: number;
  message?: string;
  writeErrors?: Array<{ index: number; code: number; errmsg: string }>;
  writeConcernError?: { code: number; errmsg: string };
}

/**
 * Runs the driver's result handling over batches of `size` documents: each answered by the next reply, until a reply is
 * an Error (a reset or a server error mid-command), which ends the write as the driver ends it.
 */
export function driverBulkError(
  count: number,
  ordered: boolean,
  size: number,
  replies: Array<BulkReply | Error>,
): unknown {
  const bulkResult = {
    ok: 1,
    writeErrors: [] as Array<{ code: number; errmsg?: string }>,
    writeConcernErrors: [] as unknown[],
    insertedIds: [] as unknown[],
    nInserted: 0,
    nUpserted: 0,
    nMatched: 0,
    nModified: 0,
    nRemoved: 0,
    upserted: [] as unknown[],
  };
  for (let start = 0, i = 0; start < count; start += size, i += 1) {
    const reply = replies[i];
    if (reply === undefined) break;
    if (reply instanceof Error)
      return new MongoBulkWriteError(reply, new bulk.BulkWriteResult(bulkResult, ordered) as never);
    const batch = new bulk.Batch(bulk.BatchType.INSERT, start);
    for (let j = start; j < Math.min(count, start + size); j += 1) {
      batch.operations.push({ _id: `d${j}` });
      batch.originalIndexes.push(j);
    }
    bulk.mergeBatchResults(batch, bulkResult, null, reply);
    if (ordered && bulkResult.writeErrors.length > 0) break;
  }
  const result = new bulk.BulkWriteResult(bulkResult, ordered) as never;
  const first = bulkResult.writeErrors[0];
  if (first) {
    return new MongoBulkWriteError(
      {
        message: first.errmsg ?? 'write operation failed',
        code: first.code,
        writeErrors: bulkResult.writeErrors,
      } as never,
      result,
    );
  }
  const concern = bulkResult.writeConcernErrors[0];
  if (concern) return new MongoBulkWriteError(concern as never, result);
  return undefined;
}

/** The error of an unordered insert of `count` documents whose ids at `duplicates` existed (the others went in). */
export function duplicateKeyError(count: number, duplicates: number[]): MongoBulkWriteError {
  const writeErrors = duplicates.map((index) => ({ index, code: 11000, errmsg: 'E11000 duplicate key error' }));
  return driverBulkError(count, false, count, [
    { ok: 1, n: count - duplicates.length, writeErrors },
  ]) as MongoBulkWriteError;
}

/** The error of an insert of `count` documents broken by `cause` (a reset, a server error) before any reply. */
export function brokenInsertError(count: number, cause: Error): MongoBulkWriteError {
  return driverBulkError(count, false, count, [cause]) as MongoBulkWriteError;
}
