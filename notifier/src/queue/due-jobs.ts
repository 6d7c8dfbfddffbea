import type { Logger } from 'pino';
import { nextDelayMs } from '../domain/retry-policy';
import { WorkLoop } from './work-loop';

/** What a worker of due jobs needs of their store (a store over a DueQueue). */
export interface DueJobStore<T> {
  /** Takes up to `limit` due jobs, leased to this worker until `now + leaseMs` (see DueQueue.claim). */
  claim(now: Date, leaseMs: number, limit: number): Promise<T[]>;
  /** Deletes lease documents created before `before`. */
  pruneLeases(before: Date): Promise<number>;
}

/** How a feature runs its due jobs: the settings its own options take from its configuration. */
export interface DueJobsSettings {
  log: Logger;
  /** Idle poll interval, milliseconds (`wake` cuts it short). */
  pollMs: number;
  /** A claimed job stays this worker's this long: the call's timeout plus a margin for the store's writes. */
  leaseMs: number;
  /** Jobs in flight in this process. */
  concurrency: number;
  /** Delays after each failed attempt, seconds: `retryScheduleS[0]` follows the first. Once spent, a job fails. */
  retryScheduleS: readonly number[];
}

export interface DueJobsOptions<T extends { _id: string }> extends DueJobsSettings {
  store: DueJobStore<T>;
  /**
   * Runs one claimed job and records its outcome in the store (final, or due again after `afterFailure`). A throw
   * leaves the lease to expire: the job is claimed again then, nothing is lost.
   */
  run(job: T): Promise<void>;
  /** Closes the clients the jobs call, once the jobs in flight are done. */
  close?(): Promise<void> | void;
}

/**
 * Whether an attempt started at `now` ends within a lease that ends at `leaseUntil`, an attempt taking `attemptMs` at
 * most: one that outlasts its lease may be taken over by another notifier, and the job done twice.
 */
export function attemptFits(leaseUntil: number, attemptMs: number, now: number): boolean {
  return leaseUntil - now >= attemptMs;
}

/** A new job's fields as a due queue keeps them: no attempt yet, due `now`. */
export function dueNow(now: Date) {
  return { attemptCount: 0, attempts: [], dueAt: now, createdAt: now, updatedAt: now };
}

/** A job's next state after a failed attempt. */
export type AfterFailure = { state: 'pending'; dueAt: Date; delayMs: number } | { state: 'failed' };

/**
 * The worker of one queue of due jobs (user emails, payment actions, Transparency Database retries): a WorkLoop that
 * claims due jobs from their store, runs them within the concurrency, and prunes old leases; and the retry schedule
 * that says when a failed job is due again. The store proves each write (see DueQueue); a job whose run fails is
 * found again when its lease runs out.
 */
export class DueJobs<T extends { _id: string }> {
  private readonly loop: WorkLoop<T>;

  constructor(private readonly options: DueJobsOptions<T>) {
    const { store, leaseMs } = options;
    this.loop = new WorkLoop<T>({
      log: options.log,
      pollMs: options.pollMs,
      concurrency: options.concurrency,
      claim: (now, limit) => store.claim(now, leaseMs, limit),
      process: (job) => options.run(job),
      leases: { leaseMs, prune: (before) => store.pruneLeases(before) },
    });
  }

  start(): void {
    this.loop.start();
  }

  get isRunning(): boolean {
    return this.loop.isRunning;
  }

  /** New or re-scheduled jobs are due now: claim without waiting for the poll. */
  wake(): void {
    this.loop.wake();
  }

  /** Claims nothing more, waits for the jobs in flight, then closes the clients. */
  async stop(): Promise<void> {
    await this.loop.stop();
    await this.options.close?.();
  }

  /**
   * After failed attempt number `attempts`: due again after the schedule's delay (later if the other side asked for
   * `retryAfterMs`), or failed when the failure is final or the schedule is spent.
   */
  afterFailure(attempts: number, retriable: boolean, retryAfterMs?: number): AfterFailure {
    const delayMs = retriable
      ? nextDelayMs({
          attempts,
          scheduleS: this.options.retryScheduleS,
          ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
        })
      : null;
    if (delayMs === null) return { state: 'failed' };
    return { state: 'pending', dueAt: new Date(Date.now() + delayMs), delayMs };
  }
}
