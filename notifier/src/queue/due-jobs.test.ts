import pino from 'pino';
import { JITTER } from '../domain/retry-policy';
import { DueJobs, type DueJobStore, type DueJobsOptions } from './due-jobs';

interface Job {
  _id: string;
}

/** Resolves once `predicate` holds; rejects after `timeoutMs`. */
async function waitFor(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * An in-memory store of due jobs with leases: `claim` hands out the jobs that are not leased, or whose lease ran out,
 * and leases them until `now + leaseMs`; `done` takes a job out (its outcome recorded).
 */
function memoryStore(ids: string[]) {
  const leasedUntil = new Map<string, number>(ids.map((id) => [id, 0]));
  const claims: Array<{ leaseMs: number; limit: number; ids: string[] }> = [];
  const prunes: Date[] = [];
  const store: DueJobStore<Job> = {
    claim: (now, leaseMs, limit) => {
      const due = [...leasedUntil].filter(([, until]) => until <= now.getTime()).slice(0, limit);
      for (const [id] of due) leasedUntil.set(id, now.getTime() + leaseMs);
      claims.push({ leaseMs, limit, ids: due.map(([id]) => id) });
      return Promise.resolve(due.map(([id]) => ({ _id: id })));
    },
    pruneLeases: (before) => {
      prunes.push(before);
      return Promise.resolve(0);
    },
  };
  return { store, claims, prunes, done: (id: string) => leasedUntil.delete(id), left: () => leasedUntil.size };
}

function jobsWith(store: DueJobStore<Job>, overrides: Partial<DueJobsOptions<Job>> = {}): DueJobs<Job> {
  return new DueJobs<Job>({
    store,
    log: pino({ level: 'silent' }),
    // Long enough that only `wake()` or a settled job starts another pass within a test.
    pollMs: 60_000,
    leaseMs: 10_000,
    concurrency: 2,
    retryScheduleS: [10, 60],
    run: () => Promise.resolve(),
    ...overrides,
  });
}

describe('DueJobs', () => {
  let jobs: DueJobs<Job> | undefined;
  afterEach(async () => {
    await jobs?.stop();
    jobs = undefined;
  });

  it('claims due jobs with its lease, within its concurrency, and runs each once', async () => {
    const memory = memoryStore(['a', 'b', 'c']);
    const ran: string[] = [];
    jobs = jobsWith(memory.store, {
      run: (job) => {
        ran.push(job._id);
        memory.done(job._id);
        return Promise.resolve();
      },
    });
    jobs.start();
    await waitFor(() => ran.length === 3);
    expect(ran.sort()).toEqual(['a', 'b', 'c']);
    expect(memory.claims[0]).toEqual({ leaseMs: 10_000, limit: 2, ids: ['a', 'b'] });
    expect(memory.left()).toBe(0);
  });

  it('claims a job again once the lease of a run that failed has run out', async () => {
    const memory = memoryStore(['a']);
    let runs = 0;
    jobs = jobsWith(memory.store, {
      leaseMs: 30,
      pollMs: 10,
      run: (job) => {
        runs += 1;
        if (runs === 1) return Promise.reject(new Error('receiver away'));
        memory.done(job._id);
        return Promise.resolve();
      },
    });
    jobs.start();
    await waitFor(() => runs === 2);
    expect(memory.left()).toBe(0);
  });

  it('prunes leases older than ten lease times, and never newer than an hour', async () => {
    const memory = memoryStore([]);
    jobs = jobsWith(memory.store, { leaseMs: 1_000_000 });
    const before = Date.now();
    jobs.start();
    await waitFor(() => memory.prunes.length === 1);
    expect(memory.prunes[0]!.getTime()).toBeLessThanOrEqual(Date.now() - 10 * 1_000_000);
    expect(memory.prunes[0]!.getTime()).toBeGreaterThanOrEqual(before - 10 * 1_000_000);
  });

  it('waits for the jobs in flight when stopped, then closes the clients', async () => {
    const memory = memoryStore(['a']);
    const events: string[] = [];
    let finishRun!: () => void;
    jobs = jobsWith(memory.store, {
      run: () =>
        new Promise<void>((resolve) => {
          events.push('run');
          finishRun = () => {
            events.push('finished');
            resolve();
          };
        }),
      close: () => {
        events.push('closed');
      },
    });
    jobs.start();
    await waitFor(() => events.includes('run'));
    const stopped = jobs.stop();
    expect(jobs.isRunning).toBe(false);
    finishRun();
    await stopped;
    expect(events).toEqual(['run', 'finished', 'closed']);
  });

  it.each([
    { attempts: 1, retriable: true, want: 'pending', delayS: 10 },
    { attempts: 2, retriable: true, want: 'pending', delayS: 60 },
    { attempts: 3, retriable: true, want: 'failed' },
    { attempts: 1, retriable: false, want: 'failed' },
  ])(
    'after failed attempt $attempts (retriable $retriable) the job is $want',
    ({ attempts, retriable, want, delayS }) => {
      const next = jobsWith(memoryStore([]).store).afterFailure(attempts, retriable);
      expect(next.state).toBe(want);
      if (next.state !== 'pending' || delayS === undefined) return;
      expect(next.delayMs).toBeGreaterThanOrEqual(delayS * 1000 * (1 - JITTER));
      expect(next.delayMs).toBeLessThanOrEqual(delayS * 1000 * (1 + JITTER));
      expect(Math.abs(next.dueAt.getTime() - Date.now() - next.delayMs)).toBeLessThan(1000);
    },
  );

  it('waits for what the other side asked (Retry-After) when that is later than the schedule', () => {
    const next = jobsWith(memoryStore([]).store).afterFailure(1, true, 120_000);
    expect(next).toEqual({ state: 'pending', dueAt: expect.any(Date), delayMs: 120_000 });
  });
});
