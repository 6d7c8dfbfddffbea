import { duplicateKeyError } from '@vigil/proto/dist/testing/driver-errors';
import { type Collection } from 'mongodb';
import { DueQueue, type DueCursorDoc, type LeaseDoc, type QueuedDoc } from './due-queue';

type Doc = { _id: string } & Record<string, unknown>;

const isDate = (value: unknown): value is Date => Object.prototype.toString.call(value) === '[object Date]';
const same = (a: unknown, b: unknown) => (isDate(a) && isDate(b) ? a.getTime() === b.getTime() : a === b);

/** A copy, as the store hands out (Dates stay Dates of this realm). */
function copy<T>(value: T): T {
  if (isDate(value)) return new Date(value.getTime()) as T;
  if (Array.isArray(value)) return value.map(copy) as T;
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, copy(v)])) as T;
  return value;
}

/** Whether `doc` matches `filter`: equalities, `$exists: false` and `$lt`, the operators the queue sends. */
function matches(doc: Doc, filter: Record<string, unknown>): boolean {
  return Object.entries(filter).every(([field, wanted]) => {
    const value = doc[field];
    if (wanted !== null && typeof wanted === 'object' && !isDate(wanted)) {
      const ops = wanted as { $exists?: boolean; $lt?: Date };
      if (ops.$exists === false) return value === undefined;
      if (ops.$lt !== undefined) return isDate(value) && value.getTime() < ops.$lt.getTime();
      throw new Error(`unsupported filter ${JSON.stringify(wanted)}`);
    }
    return same(value, wanted);
  });
}

type Update = {
  $set?: Record<string, unknown>;
  $unset?: Record<string, unknown>;
  $push?: Record<string, unknown>;
  $inc?: Record<string, number>;
  $max?: Record<string, number>;
};

function apply(doc: Doc, update: Update): void {
  Object.assign(doc, update.$set);
  for (const field of Object.keys(update.$unset ?? {})) delete doc[field];
  for (const [field, value] of Object.entries(update.$push ?? {})) doc[field] = [...((doc[field] as []) ?? []), value];
  for (const [field, by] of Object.entries(update.$inc ?? {})) doc[field] = ((doc[field] as number) ?? 0) + by;
  for (const [field, value] of Object.entries(update.$max ?? {}))
    doc[field] = Math.max((doc[field] as number | undefined) ?? -Infinity, value);
}

/**
 * A collection in memory, shared by the queues of a test as the store is shared by notifier processes. A duplicate
 * `_id` fails an unordered insertMany with the driver's MongoBulkWriteError (code 11000 per duplicate, by index).
 */
class MemoryCollection {
  readonly docs = new Map<string, Doc>();
  /** Documents returned by `find`, in all: what the queue's polls read. */
  found = 0;

  insertMany(docs: Doc[]) {
    const writeErrors: { code: number; index: number }[] = [];
    docs.forEach((doc, index) => {
      if (this.docs.has(doc._id)) writeErrors.push({ code: 11000, index });
      else this.docs.set(doc._id, copy(doc));
    });
    if (writeErrors.length > 0) {
      return Promise.reject(
        duplicateKeyError(
          docs.length,
          writeErrors.map(({ index }) => index),
        ),
      );
    }
    return Promise.resolve({ insertedCount: docs.length });
  }

  find(filter: Record<string, unknown>, options: { projection?: Record<string, 1> } = {}) {
    const found = [...this.docs.values()].filter((doc) => matches(doc, filter));
    this.found += found.length;
    const fields = Object.keys(options.projection ?? {});
    const projected = found.map((doc) =>
      fields.length === 0
        ? copy(doc)
        : Object.fromEntries(fields.filter((f) => f in doc).map((f) => [f, copy(doc[f])])),
    );
    return { toArray: () => Promise.resolve(projected) };
  }

  findOne(filter: Record<string, unknown>) {
    const doc = [...this.docs.values()].find((d) => matches(d, filter));
    return Promise.resolve(doc ? copy(doc) : null);
  }

  /**
   * Returns the document as it was before the update (the driver's default). Not atomic, as on FerretDB v1: it reads,
   * filters, lets other callers run, then writes by `_id`, so two racing calls can both match.
   */
  async findOneAndUpdate(filter: Record<string, unknown>, update: Update) {
    const doc = [...this.docs.values()].find((d) => matches(d, filter));
    if (!doc) return null;
    const before = copy(doc);
    await new Promise((resolve) => setImmediate(resolve));
    const current = this.docs.get(before._id);
    if (current) apply(current, update);
    return before;
  }

  updateOne(filter: Record<string, unknown>, update: Update, options: { upsert?: boolean } = {}) {
    const doc = [...this.docs.values()].find((d) => matches(d, filter));
    if (doc) {
      apply(doc, update);
      return Promise.resolve({ matchedCount: 1, modifiedCount: 1, upsertedCount: 0 });
    }
    if (!options.upsert) return Promise.resolve({ matchedCount: 0, modifiedCount: 0, upsertedCount: 0 });
    const created = { ...filter } as Doc;
    apply(created, update);
    this.docs.set(created._id, created);
    return Promise.resolve({ matchedCount: 0, modifiedCount: 0, upsertedCount: 1 });
  }

  deleteMany(filter: Record<string, unknown>) {
    let deletedCount = 0;
    for (const [id, doc] of this.docs) {
      if (matches(doc, filter)) {
        this.docs.delete(id);
        deletedCount += 1;
      }
    }
    return Promise.resolve({ deletedCount });
  }
}

interface Job extends QueuedDoc {
  payload: string;
}

const TIMING = { bucketMs: 10_000, graceMs: 2_000 };
const LEASE_MS = 30_000;

function collections() {
  return { jobs: new MemoryCollection(), leases: new MemoryCollection(), cursors: new MemoryCollection() };
}

/** A queue over shared collections: several of them stand for several notifier processes. */
function queue(store: ReturnType<typeof collections>): DueQueue<Job> {
  return new DueQueue<Job>(
    store.jobs as unknown as Collection<Job>,
    store.leases as unknown as Collection<LeaseDoc>,
    store.cursors as unknown as Collection<DueCursorDoc>,
    'deliveries',
    TIMING,
  );
}

const job = (id: string, dueAt: Date, tenantId = 'ten_1'): Job => ({
  _id: id,
  tenantId,
  state: 'pending',
  attemptCount: 0,
  dueAt,
  updatedAt: new Date(),
  payload: 'p',
});

const inMs = (ms: number) => new Date(Date.now() + ms);

describe('DueQueue', () => {
  it('inserts a job once: a re-consumed one is reported as existing', async () => {
    const store = collections();
    const q = queue(store);
    expect(await q.insertNew(job('job_1', inMs(0)))).toBe(true);
    expect(await q.insertNew(job('job_1', inMs(0)))).toBe(false);
    expect(store.jobs.docs.size).toBe(1);
  });

  it('hands a job out only once it is due, leased to the claimant', async () => {
    const store = collections();
    const q = queue(store);
    await q.insertNew(job('job_1', inMs(5_000)));
    expect(await q.claim(new Date(), LEASE_MS, 10)).toEqual([]);
    const at = inMs(6_000);
    const [claimed, ...rest] = await q.claim(at, LEASE_MS, 10);
    expect(rest).toEqual([]);
    expect(claimed).toMatchObject({ _id: 'job_1', state: 'sending', payload: 'p' });
    expect(claimed!.leaseUntil).toEqual(new Date(at.getTime() + LEASE_MS));
    expect(store.jobs.docs.get('job_1')).toMatchObject({ state: 'sending', leaseId: claimed!.leaseId });
    // Claimed: not handed out again while the lease holds.
    expect(await q.claim(inMs(7_000), LEASE_MS, 10)).toEqual([]);
  });

  it('gives a due job to one of two processes claiming it at the same moment', async () => {
    const store = collections();
    const [a, b] = [queue(store), queue(store)];
    // Both start (and so read the current bucket) before the job exists; it is written by a third process.
    await Promise.all([a.claim(new Date(), LEASE_MS, 10), b.claim(new Date(), LEASE_MS, 10)]);
    await queue(store).insertNew(job('job_1', new Date()));
    a.touch(new Date());
    b.touch(new Date());
    const [fromA, fromB] = await Promise.all([a.claim(inMs(1), LEASE_MS, 10), b.claim(inMs(1), LEASE_MS, 10)]);
    expect([...fromA, ...fromB].map((claimed) => claimed._id)).toEqual(['job_1']);
  });

  it('hands a rescheduled job out again at its new due time, not before', async () => {
    const store = collections();
    const q = queue(store);
    await q.insertNew(job('job_1', new Date()));
    const [claimed] = await q.claim(inMs(1), LEASE_MS, 10);
    await q.finish(claimed!, { state: 'pending', dueAt: inMs(4_000) }, { $inc: { attemptCount: 1 } });
    expect(store.jobs.docs.get('job_1')).toMatchObject({ state: 'pending', attemptCount: 1 });
    expect(store.jobs.docs.get('job_1')?.leaseId).toBeUndefined();
    expect(await q.claim(inMs(2_000), LEASE_MS, 10)).toEqual([]);
    expect((await q.claim(inMs(4_500), LEASE_MS, 10)).map((j) => j._id)).toEqual(['job_1']);
  });

  it('ends a job with a final state: never handed out again', async () => {
    const store = collections();
    const q = queue(store);
    await q.insertNew(job('job_1', new Date()));
    const [claimed] = await q.claim(inMs(1), LEASE_MS, 10);
    await q.finish(claimed!, { state: 'succeeded' });
    expect(store.jobs.docs.get('job_1')).toMatchObject({ state: 'succeeded' });
    expect(store.jobs.docs.get('job_1')?.due).toBeUndefined();
    expect(await q.claim(inMs(LEASE_MS + 60_000), LEASE_MS, 10)).toEqual([]);
  });

  it('lets another process take over a job whose claimant died mid-attempt, once the lease ran out', async () => {
    const store = collections();
    const dead = queue(store);
    await dead.insertNew(job('job_1', new Date()));
    const [claimed] = await dead.claim(inMs(1), 1_000, 10);
    const other = queue(store);
    expect(await other.claim(inMs(500), LEASE_MS, 10)).toEqual([]);
    // The lease's bucket is read once it has closed; the job is then due again, for another attempt.
    const later = inMs(1_000 + TIMING.bucketMs + TIMING.graceMs + 1_000);
    const [taken] = await other.claim(later, LEASE_MS, 10);
    expect(taken).toMatchObject({ _id: 'job_1', state: 'sending', interruptedAt: claimed!.updatedAt });
    expect(taken!.leaseId).not.toBe(claimed!.leaseId);
    // The dead claimant's late outcome writes nothing over the new lease.
    await dead.finish(claimed!, { state: 'succeeded' });
    expect(store.jobs.docs.get('job_1')).toMatchObject({ state: 'sending', leaseId: taken!.leaseId });
  });

  it('reads none of the jobs scheduled for later when it polls', async () => {
    const store = collections();
    const q = queue(store);
    await q.claim(new Date(), LEASE_MS, 10);
    await q.insertMany(Array.from({ length: 200 }, (_, i) => job(`job_${i}`, inMs(3_600_000))));
    const before = store.jobs.found;
    for (const ms of [1_000, 15_000, 30_000]) expect(await q.claim(inMs(ms), LEASE_MS, 10)).toEqual([]);
    expect(store.jobs.found - before).toBe(0);
    expect(q.reads).toBeGreaterThan(0);
  });

  it('hands out due work fairly between tenants', async () => {
    const store = collections();
    const q = queue(store);
    await q.insertMany([
      ...Array.from({ length: 5 }, (_, i) => job(`busy_${i}`, new Date(), 'ten_busy')),
      job('quiet_1', new Date(), 'ten_quiet'),
    ]);
    const claimed = await q.claim(inMs(1), LEASE_MS, 2);
    expect(claimed.map((j) => j.tenantId).sort()).toEqual(['ten_busy', 'ten_quiet']);
  });
});
