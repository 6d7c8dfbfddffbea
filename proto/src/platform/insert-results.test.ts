import { MongoBulkWriteError, MongoNetworkError, MongoServerError } from 'mongodb';
import { driverBulkError, type BulkReply } from '../testing/driver-errors';
import {
  insertEach,
  insertInOrder,
  insertUnlessExists,
  answeredInsertOutcomes,
  provenInsertOutcomes,
  type InsertOutcome,
} from './insert-results';
import { isDuplicateKeyError, isUnavailableServerError } from './store-errors';

const dup = (index: number) => ({ index, code: 11000, errmsg: 'E11000 duplicate key error' });
const reset = () => new MongoNetworkError('read ECONNRESET');
const serverError = (code: number, message: string) => new MongoServerError({ ok: 0, code, errmsg: message, message });

describe('answeredInsertOutcomes', () => {
  it.each<[string, number, Array<BulkReply | Error>, ReturnType<typeof answeredInsertOutcomes>]>([
    [
      'a refused document among duplicates and inserts',
      3,
      [{ ok: 1, n: 1, writeErrors: [dup(0), { index: 2, code: 2, errmsg: 'invalid byte sequence' }] }],
      ['duplicate', 'inserted', 'refused'],
    ],
    ['a connection reset (no write error: nothing answered)', 3, [reset()], undefined],
    ['a server error for the whole command', 3, [serverError(1, 'invalid byte sequence')], undefined],
    [
      'write errors that do not account for every document',
      3,
      [{ ok: 1, n: 0, writeErrors: [{ index: 1, code: 2, errmsg: 'bad value' }] }],
      undefined,
    ],
  ])('%s', (_name, count, replies, expected) => {
    expect(answeredInsertOutcomes(driverBulkError(count, false, 10, replies), count)).toEqual(expected);
  });
});

describe('provenInsertOutcomes', () => {
  const cases: Array<[string, number, boolean, number, Array<BulkReply | Error>, InsertOutcome[] | undefined]> = [
    [
      'duplicates only, unordered',
      3,
      false,
      10,
      [{ ok: 1, n: 1, writeErrors: [dup(0), dup(2)] }],
      ['duplicate', 'inserted', 'duplicate'],
    ],
    [
      'one duplicate, ordered',
      4,
      true,
      10,
      [{ ok: 1, n: 2, writeErrors: [dup(2)] }],
      ['inserted', 'inserted', 'duplicate', 'not_reached'],
    ],
    [
      'a duplicate in the second batch of two',
      4,
      false,
      2,
      [
        { ok: 1, n: 2 },
        { ok: 1, n: 1, writeErrors: [dup(1)] },
      ],
      ['inserted', 'inserted', 'inserted', 'duplicate'],
    ],
    ['a connection reset mid-command (nothing answered)', 3, false, 10, [reset()], undefined],
    [
      'a reset in the second batch after a duplicate in the first',
      4,
      false,
      2,
      [{ ok: 1, n: 1, writeErrors: [dup(0)] }, reset()],
      undefined,
    ],
    [
      'a server error for the whole command (FerretDB refusing a NUL: some stored)',
      3,
      false,
      10,
      [serverError(1, 'ERROR: invalid byte sequence (SQLSTATE 22P05)')],
      undefined,
    ],
    ['a top-level error reply', 3, false, 10, [{ ok: 0, code: 1, message: 'internal error' }], undefined],
    [
      'a top-level duplicate reply for a batch of several',
      3,
      false,
      10,
      [{ ok: 0, code: 11000, message: 'E11000' }],
      undefined,
    ],
    [
      'a mix of duplicate and other write errors',
      3,
      false,
      10,
      [{ ok: 1, n: 1, writeErrors: [dup(0), { index: 1, code: 2, errmsg: 'bad value' }] }],
      undefined,
    ],
    [
      'duplicates that do not account for every document (a partial batch)',
      3,
      false,
      10,
      [{ ok: 1, n: 0, writeErrors: [dup(0)] }],
      undefined,
    ],
    [
      'an ordered duplicate with fewer inserted before it than its index',
      3,
      true,
      10,
      [{ ok: 1, n: 0, writeErrors: [dup(1)] }],
      undefined,
    ],
    [
      'a write concern error',
      2,
      false,
      10,
      [{ ok: 1, n: 2, writeConcernError: { code: 64, errmsg: 'waiting for replication timed out' } }],
      undefined,
    ],
  ];
  it.each(cases)('%s', (_name, count, ordered, size, replies, expected) => {
    const err = driverBulkError(count, ordered, size, replies);
    expect(err).toBeInstanceOf(MongoBulkWriteError);
    expect(provenInsertOutcomes(err, count, ordered)).toEqual(expected);
  });

  it('proves nothing from an error that is not a bulk write error', () => {
    expect(provenInsertOutcomes(reset(), 1, false)).toBeUndefined();
    expect(provenInsertOutcomes(serverError(11000, 'E11000'), 1, false)).toBeUndefined();
  });

  it('reads a bulk write broken off by a reset as the store out of reach, and a refused one as not', () => {
    expect(isUnavailableServerError(driverBulkError(3, false, 10, [reset()]))).toBe(true);
    const refused = driverBulkError(3, false, 10, [serverError(2, 'bad value')]);
    expect(isUnavailableServerError(refused)).toBe(false);
    expect(isUnavailableServerError(driverBulkError(3, false, 10, [{ ok: 1, n: 2, writeErrors: [dup(1)] }]))).toBe(
      false,
    );
  });

  it('reads a bulk write error as never a plain duplicate', () => {
    const err = driverBulkError(3, false, 10, [{ ok: 1, n: 0, writeErrors: [dup(0)] }]);
    expect((err as { code?: number }).code).toBe(11000);
    expect(isDuplicateKeyError(err)).toBe(false);
    expect(isDuplicateKeyError(serverError(11000, 'E11000'))).toBe(true);
  });
});

describe('insert helpers', () => {
  const failing = (err: unknown) => {
    const error = err instanceof Error ? err : new Error('no error built');
    return { insertMany: () => Promise.reject(error), insertOne: () => Promise.reject(error) };
  };

  it('insertEach answers per document for proven duplicates and rethrows a reset', async () => {
    const proven = driverBulkError(3, false, 10, [{ ok: 1, n: 2, writeErrors: [dup(1)] }]);
    await expect(insertEach(failing(proven), [1, 2, 3])).resolves.toEqual([true, false, true]);
    const broken = driverBulkError(3, false, 10, [reset()]);
    await expect(insertEach(failing(broken), [1, 2, 3])).rejects.toBe(broken);
    await expect(insertEach({ insertMany: () => Promise.resolve({}) }, [1, 2])).resolves.toEqual([true, true]);
  });

  it('insertInOrder counts what went in before a duplicate and rethrows anything else', async () => {
    const proven = driverBulkError(3, true, 10, [{ ok: 1, n: 1, writeErrors: [dup(1)] }]);
    await expect(insertInOrder(failing(proven), [1, 2, 3])).resolves.toBe(1);
    const broken = driverBulkError(3, true, 10, [serverError(1, 'connection reset by peer')]);
    await expect(insertInOrder(failing(broken), [1, 2, 3])).rejects.toBe(broken);
  });

  it('insertUnlessExists answers false only for a duplicate key', async () => {
    await expect(insertUnlessExists(failing(serverError(11000, 'E11000')), 1)).resolves.toBe(false);
    const err = reset();
    await expect(insertUnlessExists(failing(err), 1)).rejects.toBe(err);
    await expect(insertUnlessExists({ insertOne: () => Promise.resolve({}) }, 1)).resolves.toBe(true);
  });
});
