import type { Logger } from 'pino';
import { WorkLoop, type WorkLoopOptions } from './work-loop';

interface Job {
  _id: string;
}

/** A promise with its resolve function. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

/** Rejects when `promise` has not settled within `ms`: the loop should have acted at once, not after a poll. */
async function within<T>(promise: Promise<T>, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not settled within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

const ticks = () => new Promise((resolve) => setImmediate(resolve));
const fakeLog = () => ({ warn: jest.fn(), error: jest.fn() });
const jobs = (...ids: string[]): Job[] => ids.map((_id) => ({ _id }));

function loopWith(overrides: Partial<WorkLoopOptions<Job>>, log = fakeLog()): WorkLoop<Job> {
  return new WorkLoop<Job>({
    log: log as unknown as Logger,
    // Long enough that only `wake()`, a settled job or a failure's backoff starts another pass within a test.
    pollMs: 60_000,
    concurrency: 2,
    claim: () => Promise.resolve([]),
    process: () => Promise.resolve(),
    ...overrides,
  });
}

describe('WorkLoop', () => {
  let loop: WorkLoop<Job> | undefined;
  afterEach(async () => {
    await loop?.stop();
    loop = undefined;
  });

  it('claims at start and again as soon as it is woken', async () => {
    const claims = [deferred(), deferred()];
    let count = 0;
    loop = loopWith({
      claim: () => {
        claims[count]?.resolve();
        count += 1;
        return Promise.resolve([]);
      },
    });
    loop.start();
    await within(claims[0]!.promise);
    await ticks();
    expect(count).toBe(1);
    loop.wake();
    await within(claims[1]!.promise);
  });

  it('logs a failed claim and tries again after a short backoff', async () => {
    const log = fakeLog();
    const retried = deferred();
    let count = 0;
    loop = loopWith(
      {
        pollMs: 1,
        claim: () => {
          count += 1;
          if (count === 1) return Promise.reject(new Error('database away'));
          retried.resolve();
          return Promise.resolve([]);
        },
      },
      log,
    );
    loop.start();
    await within(retried.promise);
    expect(log.warn).toHaveBeenCalledWith(expect.objectContaining({ failures: 1 }), 'job claim failed');
  });

  it('claims no more than the free slots, and claims again as soon as a job settles', async () => {
    const limits: number[] = [];
    const running = new Map<string, () => void>();
    const again = deferred();
    loop = loopWith({
      concurrency: 2,
      claim: (_now, limit) => {
        limits.push(limit);
        if (limits.length === 1) return Promise.resolve(jobs('a', 'b'));
        if (limits.length === 2) again.resolve();
        return Promise.resolve([]);
      },
      process: (job) => new Promise<void>((resolve) => running.set(job._id, resolve)),
    });
    loop.start();
    await ticks();
    expect([...running.keys()]).toEqual(['a', 'b']);
    expect(limits).toEqual([2]);
    running.get('a')!();
    await within(again.promise);
    expect(limits).toEqual([2, 1]);
    running.get('b')!();
  });

  it('counts a reserved slot against the concurrency and runs the adopted job in it', async () => {
    const limits: number[] = [];
    const adopted = deferred();
    loop = loopWith({
      concurrency: 2,
      claim: (_now, limit) => {
        limits.push(limit);
        return Promise.resolve([]);
      },
      process: (job) => {
        if (job._id === 'adopted') adopted.resolve();
        return Promise.resolve();
      },
    });
    expect(loop.reserve()).toBe(false);
    loop.start();
    await ticks();
    expect([loop.reserve(), loop.reserve(), loop.reserve()]).toEqual([true, true, false]);
    loop.release();
    loop.wake();
    await ticks();
    // One slot is still promised: a pass claims for the other only.
    expect(limits).toEqual([2, 1]);
    loop.adopt({ _id: 'adopted' });
    await within(adopted.promise);
  });

  it('logs a job that fails and keeps running', async () => {
    const log = fakeLog();
    const next = deferred();
    let claims = 0;
    loop = loopWith(
      {
        claim: () => {
          claims += 1;
          if (claims === 1) return Promise.resolve(jobs('bad'));
          next.resolve();
          return Promise.resolve([]);
        },
        process: () => Promise.reject(new Error('boom')),
      },
      log,
    );
    loop.start();
    await within(next.promise);
    expect(log.error).toHaveBeenCalledWith(expect.objectContaining({ jobId: 'bad' }), 'job processing failed');
  });

  it('stops claiming, and stop waits for the jobs in flight', async () => {
    const work = deferred();
    let claims = 0;
    loop = loopWith({
      claim: () => {
        claims += 1;
        return Promise.resolve(claims === 1 ? jobs('a') : []);
      },
      process: () => work.promise,
    });
    loop.start();
    await ticks();
    const claimsBefore = claims;
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await ticks();
    expect([stopped, loop.isRunning, loop.reserve()]).toEqual([false, false, false]);
    work.resolve();
    await within(stopping);
    expect(claims).toBe(claimsBefore);
  });

  it('prunes at the first pass, the leases older than ten lease times or an hour', async () => {
    const pruned = deferred();
    let cutoff: Date | undefined;
    const startedAt = Date.now();
    loop = loopWith({
      leases: {
        leaseMs: 3 * 60 * 60 * 1000,
        prune: (before) => {
          cutoff = before;
          pruned.resolve();
          return Promise.resolve();
        },
      },
    });
    loop.start();
    await within(pruned.promise);
    const age = startedAt - (cutoff?.getTime() ?? startedAt);
    expect(age).toBeGreaterThanOrEqual(30 * 60 * 60 * 1000 - 1000);
    expect(age).toBeLessThanOrEqual(30 * 60 * 60 * 1000);
  });
});
