import { driverBulkError } from '@vigil/proto/dist/testing/driver-errors';
import { MongoNetworkError, MongoServerError, type Collection } from 'mongodb';
import { UnavailableError } from '../errors';
import { DueQueue } from './due-queue';
import type { LeaseDoc } from './lease-claims';
import { isRetriable } from './store-errors';
import type { DueCursorDoc, DueQueueTiming, QueuedDoc, QueueIncident } from './queued-doc';
import { random, SimConnection, SimStore, type SimCollection } from './testing/sim-store';

interface Job extends QueuedDoc {
  payload: string;
}

// A finish's write is tried three times, a millisecond apart: the specs run on real timers.
const TIMING = { bucketMs: 10_000, graceMs: 2_000, finishTries: { attempts: 3, backoff: { initialMs: 1, maxMs: 1 } } };
const LEASE_MS = 30_000;

/** Collections in memory, shared by the queues of a test as the store is shared by notifier processes. */
function collections() {
  const conn = new SimConnection(new SimStore(random(1), { latency: false }));
  return { jobs: conn.collection('jobs'), leases: conn.collection('leases'), cursors: conn.collection('cursors') };
}

/** A queue over shared collections: several of them stand for several notifier processes. */
function queue(store: ReturnType<typeof collections>, timing: DueQueueTiming = TIMING): DueQueue<Job> {
  return new DueQueue<Job>(
    store.jobs as unknown as Collection<Job>,
    store.leases as unknown as Collection<LeaseDoc>,
    store.cursors as unknown as Collection<DueCursorDoc>,
    'deliveries',
    timing,
  );
}

type Jobs = ReturnType<typeof collections>['jobs'];

/** Runs `body` on jest's clock from the start of a bucket; the store's turns of the event loop stay real. */
async function onTestClock<R>(body: (start: number) => Promise<R>): Promise<R> {
  const start = (Math.floor(Date.now() / TIMING.bucketMs) + 1) * TIMING.bucketMs;
  jest.useFakeTimers({ now: start, doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask', 'setTimeout'] });
  try {
    return await body(start);
  } finally {
    jest.useRealTimers();
  }
}

/** A slow store's answer: what waits on `answered` goes on once `answer()` is called. */
function slowAnswer(): { answered: Promise<void>; answer: () => void } {
  let answer!: () => void;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  return { answered, answer };
}

/** The jobs of a process whose inserts reach the store only once `answered` (a slow store), and `more` calls. */
function slowInserts(jobs: Jobs, answered: Promise<void>, more: Partial<SimCollection> = {}): Jobs {
  return Object.assign(Object.create(jobs) as Jobs, {
    insertMany: async (docs: Parameters<Jobs['insertMany']>[0]) => {
      await answered;
      return jobs.insertMany(docs);
    },
    ...more,
  });
}

/** A writer over `writerJobs` and another process over the shared store, each past its first claim (buckets opened). */
async function writerAndOther(store: ReturnType<typeof collections>, writerJobs: Jobs) {
  const writer = queue({ ...store, jobs: writerJobs });
  const other = queue(store);
  const otherClaims = () => other.claim(new Date(), LEASE_MS, 10);
  await Promise.all([writer.claim(new Date(), LEASE_MS, 10), otherClaims()]);
  return { writer, other, otherClaims };
}

/** Past the end of `start`'s bucket and the grace: the other process reads it for the last time, and takes nothing. */
async function pastLastRead(otherClaims: () => Promise<unknown[]>, start: number): Promise<void> {
  jest.setSystemTime(start + TIMING.bucketMs + TIMING.graceMs);
  expect(await otherClaims()).toEqual([]);
}

/**
 * The ids `claim` takes over the buckets after `start`'s, each claimed once its grace is over, until `count` are found
 * or `lastBucket` passed (buckets counted from `start`'s).
 */
async function claimedLater(
  claim: () => Promise<Array<{ _id: string }>>,
  start: number,
  { count = 1, lastBucket = 4 }: { count?: number; lastBucket?: number } = {},
): Promise<string[]> {
  const found: string[] = [];
  for (let bucket = 2; bucket <= lastBucket && found.length < count; bucket += 1) {
    jest.setSystemTime(start + bucket * TIMING.bucketMs + TIMING.graceMs);
    found.push(...(await claim()).map((claimed) => claimed._id));
  }
  return found.sort();
}

/**
 * A job claimed by a writer process is rescheduled due now, and the writer's finish reaches the store only once it and
 * another process swept the job's bucket for the last time (a slow store). `faults` gives the writer's collection
 * calls that fail meanwhile, over the shared `jobs`; `answer` lets the finish's write through. Then the writer and the
 * other process claim over the next buckets: what each found, and the writer's incidents.
 */
async function finishAnsweredLate(faults: (jobs: Jobs, answered: Promise<void>) => Partial<SimCollection>) {
  return onTestClock(async (start) => {
    const store = collections();
    const { answered, answer } = slowAnswer();
    const writerJobs = Object.assign(Object.create(store.jobs) as Jobs, faults(store.jobs, answered));
    const incidents: QueueIncident[] = [];
    const writer = queue({ ...store, jobs: writerJobs }, { ...TIMING, onIncident: (i) => incidents.push(i) });
    const other = queue(store);
    const claimAll = async () => [
      ...(await writer.claim(new Date(), LEASE_MS, 10)),
      ...(await other.claim(new Date(), LEASE_MS, 10)),
    ];
    expect(await claimAll()).toEqual([]);
    await writer.insertNew(job('job_1', new Date()));
    const [claimed] = await writer.claim(new Date(Date.now() + 1), LEASE_MS, 10);
    expect(claimed?._id).toBe('job_1');
    const finishing = writer.finish(claimed!, { state: 'pending', dueAt: new Date() }, { $inc: { attemptCount: 1 } });
    // Past the bucket's end and the grace, both processes sweep it for the last time: empty, the job is leased.
    jest.setSystemTime(start + TIMING.bucketMs + TIMING.graceMs);
    expect(await claimAll()).toEqual([]);
    answer();
    const [finished] = await Promise.allSettled([finishing]);
    const found = await claimedLater(claimAll, start, { lastBucket: 5 });
    return { finished, found, incidents: incidents.map((incident) => incident.kind) };
  });
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
    const due = a.pendingFields(new Date()).due;
    await a.written(due, { _id: 'job_1' });
    await b.written(due, { _id: 'job_1' });
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

  it("keeps trying a finish's write while the store is out of reach, until the lease ends", async () => {
    const store = collections();
    // The default tries: a finish refused for about three seconds still lands, well within a long lease.
    const { bucketMs, graceMs } = TIMING;
    let refusals = 5;
    const refusing = (jobs: Jobs) =>
      Object.assign(Object.create(jobs) as Jobs, {
        updateOne: (...args: Parameters<Jobs['updateOne']>) =>
          'leaseId' in args[0] && refusals-- > 0
            ? Promise.reject(new MongoNetworkError('connection refused'))
            : jobs.updateOne(...args),
      });
    const q = queue({ ...store, jobs: refusing(store.jobs) }, { bucketMs, graceMs });
    await q.insertNew(job('job_1', new Date()));
    const [claimed] = await q.claim(new Date(), LEASE_MS, 10);
    expect(await q.finish(claimed!, { state: 'succeeded' })).toBe(true);
    expect(refusals).toBe(-1);
    expect(store.jobs.docs.get('job_1')).toMatchObject({ state: 'succeeded' });

    // Refused on and on: given up once the lease is over, the job left to be taken over.
    refusals = Infinity;
    await q.insertNew(job('job_2', new Date()));
    const [short] = await q.claim(new Date(), 500, 10);
    await expect(q.finish(short!, { state: 'succeeded' })).rejects.toThrow('connection refused');
    expect(Date.now()).toBeGreaterThanOrEqual(short!.leaseUntil!.getTime());
    expect(store.jobs.docs.get('job_2')).toMatchObject({ state: 'sending', leaseId: short!.leaseId });
  }, 20_000);

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
    // The dead claimant's late outcome writes nothing over the new lease, and says so.
    expect(await dead.finish(claimed!, { state: 'succeeded' })).toBe(false);
    expect(store.jobs.docs.get('job_1')).toMatchObject({ state: 'sending', leaseId: taken!.leaseId });
  });

  it('moves a job whose insert was answered after other processes swept its bucket, so that none loses it', () =>
    onTestClock(async (start) => {
      const store = collections();
      const { answered: slowStore, answer } = slowAnswer();
      // The writer's insert waits on a slow store before it runs.
      const slowJobs = slowInserts(store.jobs, slowStore);
      const { writer, otherClaims } = await writerAndOther(store, slowJobs);
      const inserting = writer.insertNew(job('job_1', new Date()));
      await pastLastRead(otherClaims, start);
      answer();
      expect(await inserting).toBe(true);
      // The writer stops before it works the job: the other process finds it all the same.
      const found = await claimedLater(otherClaims, start);
      expect(found).toEqual(['job_1']);
    }));

  it('fails an insert whose job it could not move out of a bucket others swept, and moves it when tried again', () =>
    onTestClock(async (start) => {
      const store = collections();
      const { answered: slowStore, answer } = slowAnswer();
      let moves = 0;
      // The writer's insert waits on a slow store before it runs, and its first move out of the swept bucket fails.
      const writerJobs = slowInserts(store.jobs, slowStore, {
        updateMany: (...args: Parameters<Jobs['updateMany']>) => {
          moves += 1;
          // A refusal of the server's own, not a lost connection: the insert landed all the same.
          return moves === 1
            ? Promise.reject(new MongoServerError({ message: 'internal error', code: 1 }))
            : store.jobs.updateMany(...args);
        },
      });
      const { writer, otherClaims } = await writerAndOther(store, writerJobs);
      const doc = job('job_1', new Date());
      const inserting = writer.insertNew(doc);
      await pastLastRead(otherClaims, start);
      answer();
      // Only the writer would find the job: its caller is told to try again, and does not count it stored.
      const failure = await inserting.catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(UnavailableError);
      expect(isRetriable(failure)).toBe(true);
      // The caller tries again: the job is found stored, and moved where every process reads.
      expect(await writer.insertNew(doc)).toBe(false);
      const found = await claimedLater(otherClaims, start);
      expect(found).toEqual(['job_1']);
    }));

  it('moves a leased job whose insert landed after its lease and its bucket were over, so that one takes it over', () =>
    onTestClock(async (start) => {
      const store = collections();
      const { answered: slowStore, answer } = slowAnswer();
      const slowJobs = slowInserts(store.jobs, slowStore);
      const { writer, otherClaims } = await writerAndOther(store, slowJobs);
      // Stored leased to the writer (its first attempt got no answer), for a second.
      const inserting = writer.insertNew({
        ...job('job_1', new Date()),
        ...writer.leaseFields(new Date(start + 1_000)),
      });
      await pastLastRead(otherClaims, start);
      answer();
      expect(await inserting).toBe(true);
      // The writer does not work it (its lease is over): the other process takes it over.
      const found = await claimedLater(otherClaims, start);
      expect(found).toEqual(['job_1']);
    }));

  it('moves parked jobs brought back by a write answered after other processes swept their bucket', () =>
    onTestClock(async (start) => {
      const store = collections();
      const { answered: slowStore, answer } = slowAnswer();
      let slow = false;
      const writerJobs = Object.assign(Object.create(store.jobs) as Jobs, {
        updateMany: async (...args: Parameters<Jobs['updateMany']>) => {
          if (slow) await slowStore;
          return store.jobs.updateMany(...args);
        },
      });
      const { writer, otherClaims } = await writerAndOther(store, writerJobs);
      // The tenant's backlog, parked an hour ahead; it answered again.
      const parkedIn = String(writer.bucket(start + 3_600_000));
      for (const id of ['job_1', 'job_2']) {
        store.jobs.docs.set(id, { ...job(id, new Date(start - 60_000)), due: parkedIn, parked: true });
      }
      writer.unpark('ten_1');
      slow = true;
      // The writer brings the backlog back on a slow store, and works none of it (it stops before it does).
      const unparking = writer.claim(new Date(), LEASE_MS, 0);
      await pastLastRead(otherClaims, start);
      answer();
      expect(await unparking).toEqual([]);
      const found = await claimedLater(otherClaims, start, { count: 2 });
      expect(found).toEqual(['job_1', 'job_2']);
    }));

  it("moves a paused group's probe whose write landed after other processes swept its bucket", () =>
    onTestClock(async (start) => {
      const store = collections();
      let slow = false;
      const slowJobs = Object.assign(Object.create(store.jobs) as Jobs, {
        // The probe's write waits on a slow store past its bucket's end and the grace.
        updateOne: (...args: Parameters<Jobs['updateOne']>) => {
          if (slow) jest.setSystemTime(Date.now() + 3 * TIMING.bucketMs);
          return store.jobs.updateOne(...args);
        },
      });
      const q = queue({ ...store, jobs: slowJobs });
      await q.claim(new Date(), LEASE_MS, 10);
      await q.insertNew(job('job_1', new Date()));
      slow = true;
      const pause = { until: start + 1.5 * TIMING.bucketMs, backlogUntil: start + 3_600_000, probeEveryMs: 60_000 };
      expect(await q.claim(new Date(), LEASE_MS, 10, undefined, () => pause)).toEqual([]);
      // Not left in the probe's bucket, which other processes read for the last time before the write landed.
      expect(store.jobs.docs.get('job_1')).toMatchObject({ parked: true, due: String(q.bucket(Date.now())) });
    }));

  it('moves a leased job that a racing write left in a bucket other processes swept', async () => {
    const store = collections();
    const q = queue(store);
    const swept = String(q.bucket(Date.now()) - 5);
    const leased = { state: 'sending', leaseId: 'lease_1', leaseUntil: inMs(LEASE_MS), due: swept };
    store.jobs.docs.set('job_1', { ...job('job_1', inMs(-60_000)), ...leased });
    await q.written(swept, { _id: 'job_1' });
    // In a bucket every process reads: taken over there once its lease is over, should its worker stop.
    expect(store.jobs.docs.get('job_1')).toMatchObject({ state: 'sending', due: String(q.bucket(Date.now())) });
  });

  it('counts a lease from when it is written, however long the reads before it took', () =>
    onTestClock(async (start) => {
      const store = collections();
      let slow = false;
      // Each bucket read takes a minute (a large backlog on a loaded store).
      const slowJobs = Object.assign(Object.create(store.jobs) as Jobs, {
        find: (...args: Parameters<Jobs['find']>) => {
          if (slow) jest.setSystemTime(Date.now() + 60_000);
          return store.jobs.find(...args);
        },
      });
      const q = queue({ ...store, jobs: slowJobs });
      await q.claim(new Date(), LEASE_MS, 10);
      await q.insertNew(job('job_1', new Date()));
      slow = true;
      jest.setSystemTime(start + TIMING.bucketMs);
      const [claimed] = await q.claim(new Date(), LEASE_MS, 10);
      expect(claimed?._id).toBe('job_1');
      expect(claimed!.leaseUntil!.getTime()).toBeGreaterThanOrEqual(Date.now() + LEASE_MS - 1_000);
      expect(store.jobs.docs.get('job_1')).toMatchObject({ due: String(q.bucket(claimed!.leaseUntil!)) });
    }));

  it('leaves a job alone when the last claimant of its take-over chain still holds its lease', async () => {
    const store = collections();
    const incidents: QueueIncident[] = [];
    const q = queue(store, { ...TIMING, onIncident: (incident) => incidents.push(incident) });
    const dueAt = inMs(-1_000);
    await q.insertNew(job('job_1', dueAt));
    const key = `job_1@${dueAt.getTime()}`;
    const past = inMs(-60_000);
    // Eight claimants in a row died between their lease key and their state write; the ninth is alive, mid-write.
    for (let i = 0; i <= 8; i += 1) {
      const id = `${key}${'+'.repeat(i)}`;
      store.leases.docs.set(id, { _id: id, leaseUntil: i === 8 ? inMs(LEASE_MS) : past, createdAt: past });
    }
    expect(await q.claim(new Date(), LEASE_MS, 10)).toEqual([]);
    expect(incidents.map((incident) => incident.kind)).not.toContain('takeover_reset');
    expect(store.jobs.docs.get('job_1')).toMatchObject({ state: 'pending', dueAt });
  });

  it('keeps a rescheduled job findable when moving it out of a bucket others swept fails after its write landed', async () => {
    let moves = 0;
    const run = await finishAnsweredLate((jobs, answered) => ({
      updateOne: async (...args: Parameters<Jobs['updateOne']>) => {
        await answered;
        return jobs.updateOne(...args);
      },
      updateMany: () => {
        moves += 1;
        return Promise.reject(new MongoNetworkError('connection reset'));
      },
    }));
    expect(moves).toBe(1);
    expect(run.found).toEqual(['job_1']);
    // The outcome was written: the finish says so.
    expect(run.finished).toEqual({ status: 'fulfilled', value: true });
    expect(run.incidents).toEqual(['move_failed']);
  });

  it('keeps a rescheduled job findable when its finish landed late, lost its reply, and could not be read back', async () => {
    const run = await finishAnsweredLate((jobs, answered) => ({
      updateOne: async (...args: Parameters<Jobs['updateOne']>) => {
        await answered;
        await jobs.updateOne(...args);
        throw new MongoNetworkError('reply lost');
      },
      findOne: () => Promise.reject(new MongoNetworkError('connection reset')),
    }));
    expect(run.finished).toMatchObject({ status: 'rejected', reason: { message: 'reply lost' } });
    expect(run.found).toEqual(['job_1']);
    expect(run.incidents).toEqual(['finish_failed', 'readback_failed']);
  });

  it('keeps a rescheduled job findable when its failed finish lands after it was read back', async () => {
    let land: (() => Promise<unknown>) | undefined;
    const run = await finishAnsweredLate((jobs, answered) => ({
      updateOne: async (...args: Parameters<Jobs['updateOne']>) => {
        await answered;
        land = () => jobs.updateOne(...args);
        throw new MongoNetworkError('connection reset');
      },
      // The write runs on the server just after the read-back read the job still leased.
      findOne: async (...args: Parameters<Jobs['findOne']>) => {
        const current = await jobs.findOne(...args);
        await land?.();
        return current;
      },
    }));
    expect(run.finished).toMatchObject({ status: 'rejected', reason: { message: 'connection reset' } });
    expect(run.found).toEqual(['job_1']);
    expect(run.incidents).toEqual(['finish_failed']);
  });

  it('finds a rescheduled job whose failed finish lands after its bucket was read empty', () =>
    onTestClock(async (start) => {
      const store = collections();
      let land: (() => Promise<unknown>) | undefined;
      // The finish's first write fails on the way (the connection broke) but reaches the store later; the rest go through.
      const writerJobs = Object.assign(Object.create(store.jobs) as Jobs, {
        updateOne: (...args: Parameters<Jobs['updateOne']>) => {
          if (land) return store.jobs.updateOne(...args);
          land = () => store.jobs.updateOne(...args);
          return Promise.reject(new MongoNetworkError('connection reset'));
        },
      });
      const incidents: QueueIncident[] = [];
      const writer = queue({ ...store, jobs: writerJobs }, { ...TIMING, onIncident: (i) => incidents.push(i) });
      const other = queue(store);
      const found: string[] = [];
      const claimAll = async () => {
        for (const q of [writer, other]) found.push(...(await q.claim(new Date(), LEASE_MS, 10)).map((j) => j._id));
      };
      await claimAll();
      await writer.insertNew(job('job_1', new Date()));
      const [claimed] = await writer.claim(new Date(Date.now() + 1), LEASE_MS, 10);
      expect(claimed?._id).toBe('job_1');
      const [finished] = await Promise.allSettled([
        writer.finish(claimed!, { state: 'pending', dueAt: new Date() }, { $inc: { attemptCount: 1 } }),
      ]);
      // Past the bucket's end and the grace, both processes sweep it for the last time; then the first write lands.
      jest.setSystemTime(start + TIMING.bucketMs + TIMING.graceMs);
      await claimAll();
      await land?.();
      for (let bucket = 2; bucket <= 5 && found.length === 0; bucket += 1) {
        jest.setSystemTime(start + bucket * TIMING.bucketMs + TIMING.graceMs);
        await claimAll();
      }
      expect(found).toEqual(['job_1']);
      // A retry was answered: the outcome is written once, and the finish says so.
      expect(finished).toEqual({ status: 'fulfilled', value: true });
      expect(store.jobs.docs.get('job_1')?.attemptCount).toBe(1);
      expect(incidents.map((incident) => incident.kind)).toEqual(['finish_retried']);
    }));

  it('reports a finish written when its first write landed late and a retry matched nothing', async () => {
    let tries = 0;
    const run = await finishAnsweredLate((jobs, answered) => ({
      updateOne: async (...args: Parameters<Jobs['updateOne']>) => {
        tries += 1;
        if (tries > 1) return jobs.updateOne(...args);
        await answered;
        await jobs.updateOne(...args);
        throw new MongoNetworkError('reply lost');
      },
    }));
    expect(tries).toBe(2);
    expect(run.finished).toEqual({ status: 'fulfilled', value: true });
    // Written after both processes swept its bucket for the last time: read back and moved, so found all the same.
    expect(run.found).toEqual(['job_1']);
    expect(run.incidents).toEqual(['finish_retried']);
  });

  it('reports a finish not written when its lease was taken over before a retry', async () => {
    const store = collections();
    let tries = 0;
    const jobs = Object.assign(Object.create(store.jobs) as Jobs, {
      updateOne: (...args: Parameters<Jobs['updateOne']>) => {
        tries += 1;
        if (tries > 1) return store.jobs.updateOne(...args);
        // The write never runs; meanwhile another worker takes the job over.
        store.jobs.docs.get('job_1')!.leaseId = 'job_1@taken';
        return Promise.reject(new MongoNetworkError('connection reset'));
      },
    });
    const q = queue({ ...store, jobs });
    await q.insertNew(job('job_1', new Date()));
    const [claimed] = await q.claim(inMs(1), LEASE_MS, 10);
    expect(await q.finish(claimed!, { state: 'pending', dueAt: inMs(1_000) }, { $inc: { attemptCount: 1 } })).toBe(
      false,
    );
    expect(tries).toBe(2);
    expect(store.jobs.docs.get('job_1')).toMatchObject({ state: 'sending', leaseId: 'job_1@taken', attemptCount: 0 });
  });

  it.each([
    {
      // The server answers for each document: the others went in.
      answer: 'per document',
      refusal: (count: number, at: number) =>
        driverBulkError(count, false, count, [
          { ok: 1, n: count - 1, writeErrors: [{ index: at, code: 2, errmsg: 'invalid byte sequence' }] },
        ]),
      storesOthers: true,
    },
    {
      // FerretDB: the whole command fails (InternalError) and nothing is known of the others.
      answer: 'for the command',
      refusal: (count: number) =>
        driverBulkError(count, false, count, [
          new MongoServerError({ message: 'invalid byte sequence (SQLSTATE 22P05)', code: 1 }),
        ]),
      storesOthers: false,
    },
  ])(
    'fails only the caller whose job the store refused, answered $answer, when concurrent callers’ inserts went together',
    async ({ refusal, storesOthers }) => {
      const store = collections();
      const inserts: string[][] = [];
      // The store refuses any insert holding the bad job, for a reason of that job's own (FerretDB: a NUL byte).
      const jobs = Object.assign(Object.create(store.jobs) as Jobs, {
        insertMany: async (docs: Parameters<Jobs['insertMany']>[0]) => {
          inserts.push(docs.map((doc) => doc._id));
          const at = docs.findIndex((doc) => doc.payload === 'bad');
          if (at < 0) return store.jobs.insertMany(docs);
          if (storesOthers) await store.jobs.insertMany(docs.filter((_, index) => index !== at));
          throw refusal(docs.length, at);
        },
      });
      const q = queue({ ...store, jobs });
      const [good, bad] = await Promise.allSettled([
        q.insertMany([job('good_1', new Date()), job('good_2', new Date())]),
        q.insertMany([{ ...job('bad_1', new Date()), payload: 'bad' }]),
      ]);
      expect(inserts[0]).toEqual(['good_1', 'good_2', 'bad_1']);
      expect(good).toEqual({ status: 'fulfilled', value: new Set(['good_1', 'good_2']) });
      expect(bad).toMatchObject({ status: 'rejected', reason: { message: expect.stringContaining('invalid byte') } });
      expect([...store.jobs.docs.keys()]).toEqual(['good_1', 'good_2']);
    },
  );

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
