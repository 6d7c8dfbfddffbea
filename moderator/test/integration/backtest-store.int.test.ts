import { COLLECTIONS, type BacktestJobDoc } from '@vigil/proto';
import { scratchDb } from '../../../deploy/test-support';
import { BacktestStore } from '../../src/backtest/backtest-store';

/** The start of a backtest run on the real store. */
const scratch = scratchDb('backtest-begin');
const db = scratch.db;

afterAll(() => scratch.drop());

const job = (id: string, fields: Partial<BacktestJobDoc> = {}): BacktestJobDoc => ({
  _id: id,
  tenantId: 'ten_a',
  version: 1,
  rules: [],
  selection: { limit: 10, createdBefore: new Date().toISOString() },
  ai: { enabled: false, maxCalls: 0 },
  author: 'test',
  createdAt: new Date(),
  expiresAt: new Date(Date.now() + 3_600_000),
  ...fields,
});

describe('BacktestStore.begin', () => {
  const store = new BacktestStore(db);
  const jobs = db.collection<BacktestJobDoc>(COLLECTIONS.backtests);
  const runs = db.collection(COLLECTIONS.backtestRuns);

  it('records a job cancelled while queued as cancelled, never running, and does not start it', async () => {
    const cancelled = job('bt_cancelled', { cancelRequestedAt: new Date() });
    await jobs.insertOne(cancelled);
    await expect(store.begin(cancelled)).resolves.toEqual({ run: false, why: 'cancelled' });
    expect(await runs.findOne({ _id: 'bt_cancelled' } as never)).toMatchObject({ status: 'cancelled', attempts: 0 });
    // A second delivery of the start command finds it ended.
    await expect(store.begin(cancelled)).resolves.toEqual({ run: false, why: 'finished' });
  });

  it('starts a job that was not cancelled, and does not start one the gateway forgot', async () => {
    const queued = job('bt_queued');
    await jobs.insertOne(queued);
    await expect(store.begin(queued)).resolves.toEqual({ run: true, attempt: 1 });
    expect(await runs.findOne({ _id: 'bt_queued' } as never)).toMatchObject({ status: 'running', attempts: 1 });
    await expect(store.begin(job('bt_forgotten'))).resolves.toEqual({ run: false, why: 'gone' });
    expect(await runs.findOne({ _id: 'bt_forgotten' } as never)).toBeNull();
  });
});
