import type { Collection } from 'mongodb';
import { MongoNetworkError } from 'mongodb';
import { counterUpserts, writeCounters } from './counter-writes';

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
    await writeCounters(counters, []);
    expect(calls).toHaveLength(0);
    await writeCounters(counters, [write, { ...write, _id: 'other' }]);
    expect(calls).toEqual([{ ops: expect.any(Array), options: { ordered: true } }]);
  });

  it('are retried while the store is out of reach, a few times at most', async () => {
    const down = () => new MongoNetworkError('connection refused');
    const recovering = collection([down(), down()]);
    await writeCounters(recovering.counters, [write]);
    expect(recovering.calls).toHaveLength(3);
    const gone = collection([down(), down(), down(), down()]);
    await expect(writeCounters(gone.counters, [write])).rejects.toThrow('database unavailable');
    expect(gone.calls).toHaveLength(3);
  });

  it('are not retried for an error of their own', async () => {
    const { counters, calls } = collection([new Error('document too large')]);
    await expect(writeCounters(counters, [write])).rejects.toThrow('document too large');
    expect(calls).toHaveLength(1);
  });
});
