import type { Collection, Db } from 'mongodb';
import { MongoNetworkError } from 'mongodb';
import { FERRETDB_STATEMENTS_PER_COMMAND } from '@vigil/proto/platform';
import { counterUpserts, writeCounters } from './counter-writes';

/** A store that answers `buildInfo` as MongoDB does, or (`ferretdb`) as FerretDB does; a client of its own each. */
const storeOf = (ferretdb = false) =>
  ({
    client: {},
    admin: () => ({ command: () => Promise.resolve(ferretdb ? { ferretdbVersion: 'v1.24.0' } : { version: '7.0.0' }) }),
  }) as unknown as Db;
const db = storeOf();

const write = { _id: 'ten_a|2026-03-01|w1', inc: { 'counts.a': 2 }, setOnInsert: { tenantId: 'ten_a' } };

/** A collection whose bulkWrite answers `failures` in turn (then succeeds), recording each call's operations. */
function collection(failures: Error[] = []) {
  const calls: unknown[] = [];
  const counters = {
    bulkWrite: (ops: unknown, options: unknown) => {
      calls.push({ ops, options });
      const failure = failures.shift();
      return failure ? Promise.reject(failure) : Promise.resolve({});
    },
  } as unknown as Collection;
  return { counters, calls };
}

describe('counter writes', () => {
  it('are upserts by _id that add by dotted path and create the document with its fields', () => {
    expect(counterUpserts([write])).toEqual([
      {
        updateOne: {
          filter: { _id: 'ten_a|2026-03-01|w1' },
          update: { $inc: { 'counts.a': 2 }, $setOnInsert: { tenantId: 'ten_a' } },
          upsert: true,
        },
      },
    ]);
  });

  it('go in one ordered bulk write, and none when there is nothing to add', async () => {
    const { counters, calls } = collection();
    await writeCounters(db, counters, []);
    expect(calls).toHaveLength(0);
    await writeCounters(db, counters, [write, { ...write, _id: 'other' }]);
    expect(calls).toEqual([{ ops: expect.any(Array), options: { ordered: true } }]);
  });

  it('go to FerretDB a few to a command, in order, each command retried on its own', async () => {
    const writes = Array.from({ length: 10 }, (_, index) => ({ ...write, _id: `doc${index}` }));
    const { counters, calls } = collection([new MongoNetworkError('connection reset')]);
    await writeCounters(storeOf(true), counters, writes);
    const sent = (calls as Array<{ ops: Array<{ updateOne: { filter: { _id: string } } }> }>).map((call) =>
      call.ops.map((op) => op.updateOne.filter._id),
    );
    // The first command failed and went again alone; then the rest, none larger than the bound.
    expect(sent[0]).toEqual(sent[1]);
    expect(sent.slice(1).flat()).toEqual(writes.map((entry) => entry._id));
    expect(Math.max(...sent.map((ids) => ids.length))).toBe(FERRETDB_STATEMENTS_PER_COMMAND);
  });

  it('are retried while the store is out of reach, a few times at most', async () => {
    const down = () => new MongoNetworkError('connection refused');
    const recovering = collection([down(), down()]);
    await writeCounters(db, recovering.counters, [write]);
    expect(recovering.calls).toHaveLength(3);
    const gone = collection([down(), down(), down(), down()]);
    await expect(writeCounters(db, gone.counters, [write])).rejects.toThrow('database unavailable');
    expect(gone.calls).toHaveLength(3);
  });

  it('are not retried for an error of their own', async () => {
    const { counters, calls } = collection([new Error('document too large')]);
    await expect(writeCounters(db, counters, [write])).rejects.toThrow('document too large');
    expect(calls).toHaveLength(1);
  });
});
