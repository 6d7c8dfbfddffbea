import { MongoNetworkError, type AnyBulkWriteOperation, type BulkWriteOptions, type Collection } from 'mongodb';
import { scratchDb } from '../../../deploy/test-support';
import { writeCounters, type CounterWrite } from '../../src/store/counter-writes';

/** Counter writes on the real store when a command's reply is lost: each write is added once. */
const scratch = scratchDb('counter-writes');
const db = scratch.db;

afterAll(() => scratch.drop());

interface CountsDoc {
  _id: string;
  tenantId: string;
  counts?: { decisions?: number; flagged?: number };
}

const write = (id: string): CounterWrite => ({
  _id: id,
  inc: { 'counts.decisions': 1, 'counts.flagged': 2 },
  setOnInsert: { tenantId: 'ten_a' },
});

/**
 * The collection, whose first bulk write sends only its first `applied` writes and then loses the connection, as a
 * reset after the server applied them does (the caller cannot tell how many went in).
 */
function losingFirstReply(counters: Collection<CountsDoc>, applied: number): Collection<CountsDoc> {
  let lost = false;
  return new Proxy(counters, {
    get(target, property, receiver) {
      if (property !== 'bulkWrite') return Reflect.get(target, property, receiver) as unknown;
      return async (ops: AnyBulkWriteOperation<CountsDoc>[], options?: BulkWriteOptions) => {
        if (lost) return target.bulkWrite(ops, options);
        lost = true;
        if (applied > 0) await target.bulkWrite(ops.slice(0, applied), options);
        throw new MongoNetworkError('connection reset by peer');
      };
    },
  });
}

describe('writeCounters', () => {
  it.each([
    ['after every write of the command went in', 3],
    ['after only its first write went in', 1],
    ['before any write went in', 0],
  ])('adds each write once when the reply is lost %s', async (_, applied) => {
    const counters = db.collection<CountsDoc>(`counts_${applied}`);
    await writeCounters(db, counters, [write('a')]);
    await writeCounters(db, losingFirstReply(counters, applied), [write('a'), write('b'), write('c')]);
    const docs = await counters.find().sort({ _id: 1 }).toArray();
    expect(docs.map((doc) => [doc._id, doc.counts])).toEqual([
      ['a', { decisions: 2, flagged: 4 }],
      ['b', { decisions: 1, flagged: 2 }],
      ['c', { decisions: 1, flagged: 2 }],
    ]);
    expect(docs.every((doc) => doc.tenantId === 'ten_a')).toBe(true);
  });
});
