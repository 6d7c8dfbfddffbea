import type { Logger } from 'pino';
import { backoffMs, WakeablePause } from '@vigil/proto/platform';

export interface WorkLoopOptions<T extends { _id: string }> {
  log: Logger;
  /** Idle poll interval, milliseconds (`wake` cuts it short). */
  pollMs: number;
  /** Jobs in flight in this process. */
  concurrency: number;
  /** Jobs taken per claim, at most. Default 16. */
  claimBatch?: number;
  /** Takes up to `limit` due jobs (a DueQueue's claim). */
  claim(now: Date, limit: number): Promise<T[]>;
  /** Runs one claimed job and records its outcome; a failure leaves the lease to expire and the job to be retried. */
  process(job: T): Promise<void>;
  /**
   * Lease documents to prune every few minutes: `prune` deletes those created before the cutoff it is given, which
   * is LEASE_KEEP_MS or ten lease times ago, whichever is longer (a claim uses its lease key within milliseconds).
   */
  leases?: { leaseMs: number; prune(before: Date): Promise<unknown> };
}

const CLAIM_BATCH = 16;
const PRUNE_EVERY_MS = 10 * 60 * 1000;
const LEASE_KEEP_MS = 60 * 60 * 1000;

/**
 * The loop that runs jobs waiting in MongoDB (webhook deliveries, user emails, payment actions): claim due jobs up to
 * the concurrency, run them, sleep until the next poll or a wake-up. When claiming fails (the database away) it backs
 * off with the service's retry policy instead of spinning.
 */
export class WorkLoop<T extends { _id: string }> {
  private running = false;
  private loop?: Promise<void>;
  private readonly pause = new WakeablePause();
  private woken = false;
  private readonly inFlight = new Set<Promise<void>>();
  /** Slots promised to jobs leased to this process outside `claim` (see reserve). */
  private reserved = 0;
  private lastPrune = 0;

  constructor(private readonly options: WorkLoopOptions<T>) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  get isRunning(): boolean {
    return this.running;
  }

  /** Slots taken: jobs being worked (until their outcome is written) and slots reserved for jobs being inserted. */
  get busy(): number {
    return this.inFlight.size + this.reserved;
  }

  wake(): void {
    this.woken = true;
    this.pause.wake();
  }

  /**
   * Promises a slot to a job about to be leased to this process some other way than `claim` (a delivery inserted
   * already leased); then `adopt` the job once it is ours, or `release` the slot. False when the loop is stopped or
   * full.
   */
  reserve(): boolean {
    if (!this.running || this.inFlight.size + this.reserved >= this.options.concurrency) return false;
    this.reserved += 1;
    return true;
  }

  /** Runs a job in the slot `reserve` promised. */
  adopt(job: T): void {
    this.reserved -= 1;
    this.track(job);
  }

  /** Runs `work` in the slot `reserve` promised (a job's own path, such as a first attempt before it is stored). */
  adoptTask(jobId: string, work: () => Promise<void>): void {
    this.reserved -= 1;
    this.runTask(jobId, work);
  }

  release(): void {
    this.reserved -= 1;
  }

  /** Claims nothing more and waits for the jobs in flight. */
  async stop(): Promise<void> {
    this.running = false;
    this.pause.wake();
    await this.loop;
    await Promise.allSettled([...this.inFlight]);
  }

  private async run(): Promise<void> {
    const { log, pollMs } = this.options;
    let failures = 0;
    while (this.running) {
      this.woken = false;
      try {
        await this.fill();
        await this.prune();
        failures = 0;
      } catch (err) {
        failures += 1;
        log.warn({ err, failures }, 'job claim failed');
      }
      if (!this.running) break;
      if (this.woken && failures === 0) continue;
      const delay = failures > 0 ? backoffMs({ initialMs: pollMs * 2, maxMs: 5000 }, failures) : pollMs;
      await this.pause.sleep(delay);
    }
  }

  private async fill(): Promise<void> {
    const { concurrency, claimBatch = CLAIM_BATCH } = this.options;
    while (this.running && this.inFlight.size + this.reserved < concurrency) {
      const free = concurrency - this.inFlight.size - this.reserved;
      const jobs = await this.options.claim(new Date(), Math.min(free, claimBatch));
      if (jobs.length === 0) return;
      for (const job of jobs) this.track(job);
    }
  }

  private track(job: T): void {
    this.runTask(job._id, () => this.options.process(job));
  }

  private runTask(jobId: string, work: () => Promise<void>): void {
    const task = work()
      .catch((err: unknown) => {
        // The lease expires and another pass retries it; nothing is lost.
        this.options.log.error({ err, jobId }, 'job processing failed');
      })
      .finally(() => {
        this.inFlight.delete(task);
        this.wake();
      });
    this.inFlight.add(task);
  }

  private async prune(): Promise<void> {
    const now = Date.now();
    const { leases } = this.options;
    if (!leases || now - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    await leases.prune(new Date(now - Math.max(LEASE_KEEP_MS, leases.leaseMs * 10)));
  }
}
