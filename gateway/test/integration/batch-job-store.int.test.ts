import { MongoNetworkError, type Db } from 'mongodb';
import { COLLECTIONS, type BacktestJobDoc, type RetroactionJobDoc } from '@vigil/proto';
import { scratchDb } from '../../../deploy/test-support';
import { BacktestStore } from '../../src/store/backtest-store';
import { UNSENT_RELEASE_MS, type BatchJobStoreOptions, type BatchJobWrite } from '../../src/store/batch-job-store';
import { RetroactionStore } from '../../src/store/retroaction-store';

/**
 * A tenant's batch job slots on the real store when a hand-over write fails: a job whose insert landed with its reply
 * lost, and a job neither sent nor discarded, never hold their tenant's slot for good.
 */
const scratch = scratchDb('gwbj');
afterAll(() => scratch.drop());

/**
 * Faults armed for the next call of a collection's method (`<collection>.<method>`): `lost` applies the write, then
 * throws as if its reply was lost; `refused` throws without writing.
 */
const faults = new Map<string, 'lost' | 'refused'>();

/** The scratch database, its collections' methods failing once as `faults` says. */
const faulty = (db: Db): Db =>
  ({
    collection: (name: string) =>
      new Proxy(db.collection(name), {
        get(target, prop) {
          const value = Reflect.get(target, prop, target) as unknown;
          if (typeof value !== 'function') return value;
          const method = (value as (...args: unknown[]) => unknown).bind(target);
          const key = `${name}.${String(prop)}`;
          const fault = faults.get(key);
          if (!fault) return method;
          return async (...args: unknown[]) => {
            faults.delete(key);
            if (fault === 'lost') await method(...args);
            throw new MongoNetworkError('connection reset');
          };
        },
      }),
  }) as unknown as Db;

let clock = Date.UTC(2026, 2, 1, 10);
const minutes = (n: number) => n * 60_000;
let serial = 0;

/** Both kinds of batch job, whose stores share BatchJobStore: their collections, store and a job of each. */
const kinds = [
  {
    kind: 'backtest',
    jobs: COLLECTIONS.backtests,
    slots: COLLECTIONS.backtestSlots,
    store: (options: BatchJobStoreOptions) => new BacktestStore(faulty(scratch.db), options),
    job: (tenantId: string): BacktestJobDoc => ({
      _id: `bt_${(serial += 1)}`,
      tenantId,
      version: 1,
      rules: [],
      selection: { limit: 10, createdBefore: new Date(clock).toISOString() },
      ai: { enabled: false, maxCalls: 0 },
      author: 'api_key:k',
      createdAt: new Date(clock),
      expiresAt: new Date(clock + minutes(24 * 60)),
    }),
  },
  {
    kind: 'retroaction',
    jobs: COLLECTIONS.retroactions,
    slots: COLLECTIONS.retroactionSlots,
    store: (options: BatchJobStoreOptions) => new RetroactionStore(faulty(scratch.db), options),
    job: (tenantId: string): RetroactionJobDoc => ({
      _id: `ra_${(serial += 1)}`,
      tenantId,
      backtestId: 'bt_0',
      version: 1,
      selection: { limit: 10, createdBefore: new Date(clock).toISOString() },
      ai: false,
      predicted: {} as RetroactionJobDoc['predicted'],
      author: 'api_key:k',
      createdAt: new Date(clock),
    }),
  },
] as const;

describe.each(kinds)(
  '$kind slots when a hand-over write fails',
  ({ kind, jobs: jobDocs, slots, store: storeOf, job: jobOf }) => {
    const failed: Array<{ write: BatchJobWrite; jobId: string }> = [];
    const store = storeOf({
      now: () => new Date(clock),
      onWriteFailed: (write, job) => failed.push({ write, jobId: job._id }),
    });
    // Each kind's store typed as the backtests', which both share (BatchJobStore): the tests use only what is common.
    const jobs = store as unknown as BacktestStore;
    const job = jobOf as (tenantId: string) => BacktestJobDoc;
    let tenant = 0;
    const newTenant = () => `ten_${kind}_${(tenant += 1)}`;

    beforeAll(() => store.ensureIndexes());
    beforeEach(() => {
      failed.length = 0;
      faults.clear();
    });

    it('discards a job whose insert landed with its reply lost, so the next job of the tenant takes its slot', async () => {
      const tenantId = newTenant();
      const lost = job(tenantId);
      faults.set(`${jobDocs}.insertOne`, 'lost');
      await expect(jobs.create(lost)).rejects.toBeInstanceOf(MongoNetworkError);
      expect(await scratch.db.collection(jobDocs).findOne({ _id: lost._id as never })).toBeNull();
      expect(await jobs.create(job(tenantId))).toBe(true);
    });

    it('releases the slot of a job neither sent nor discarded once UNSENT_RELEASE_MS passed, cancelling it', async () => {
      const tenantId = newTenant();
      const orphan = job(tenantId);
      expect(await jobs.create(orphan)).toBe(true);
      // Its start command was not sent, and its discard failed: reported, not thrown over the send's error.
      faults.set(`${jobDocs}.deleteOne`, 'refused');
      expect(await jobs.discard(orphan)).toBe(false);
      expect(failed).toEqual([{ write: 'discard', jobId: orphan._id }]);

      clock += UNSENT_RELEASE_MS - minutes(1);
      expect(await jobs.create(job(tenantId))).toBe(false);
      clock += minutes(1);
      const next = job(tenantId);
      expect(await jobs.create(next)).toBe(true);
      // A start command sent after all finds it cancelled, so it runs nothing.
      expect(await jobs.get(tenantId, orphan._id)).toMatchObject({ status: 'cancelled' });
      expect(await jobs.get(tenantId, next._id)).toMatchObject({ status: 'queued' });
    });

    it('keeps the slot of a job handed over however long it waits queued', async () => {
      const tenantId = newTenant();
      const queued = job(tenantId);
      expect(await jobs.create(queued)).toBe(true);
      await jobs.sent(queued);
      clock += UNSENT_RELEASE_MS * 6;
      expect(await jobs.create(job(tenantId))).toBe(false);
      expect(await jobs.get(tenantId, queued._id)).toMatchObject({ status: 'queued' });
    });

    it('reports a failed note of a sent job, which keeps its slot until the release bound', async () => {
      const tenantId = newTenant();
      const queued = job(tenantId);
      expect(await jobs.create(queued)).toBe(true);
      faults.set(`${slots}.updateOne`, 'refused');
      await jobs.sent(queued);
      expect(failed).toEqual([{ write: 'sent', jobId: queued._id }]);
      expect(await jobs.create(job(tenantId))).toBe(false);
    });
  },
);
