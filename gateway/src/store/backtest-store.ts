import {
  BACKTEST_LIMITS,
  COLLECTIONS,
  TERMINAL_BACKTEST_STATUSES,
  type BacktestFailure,
  type BacktestJobDoc,
  type BacktestRunDoc,
  type BacktestStatus,
} from '@vigil/proto';
import type { Collection, Db } from 'mongodb';

/** A job with its run, as the API shows it. */
export interface BacktestState {
  job: BacktestJobDoc;
  run: BacktestRunDoc | null;
  status: BacktestStatus;
  error?: BacktestFailure;
}

interface SlotDoc {
  _id: string; // <tenantId>#<slot>
  tenantId: string;
  jobId: string;
  takenAt: Date;
}

/** Jobs listed at most. */
const MAX_LISTED = 50;

/**
 * Backtest jobs (the gateway writes them, a moderator reads them) and the running slots of each tenant. A tenant may
 * have `maxRunning` jobs not finished: each holds a slot, taken by a unique-index insert (`<tenantId>#<n>`), so two
 * concurrent requests never both take the last one, even on FerretDB. A slot whose job has ended is taken over. The
 * moderators' runs (`backtest_runs`) are read here, never written.
 */
export class BacktestStore {
  private readonly jobs: Collection<BacktestJobDoc>;
  private readonly slots: Collection<SlotDoc>;
  private readonly runs: Collection<BacktestRunDoc>;

  constructor(
    db: Db,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.jobs = db.collection(COLLECTIONS.backtests);
    this.slots = db.collection(COLLECTIONS.backtestSlots);
    this.runs = db.collection(COLLECTIONS.backtestRuns);
  }

  async ensureIndexes(): Promise<void> {
    await this.jobs.createIndex({ tenantId: 1 }, { name: 'tenant' });
  }

  /**
   * Takes a running slot for `job` and stores it; false when the tenant's `maxRunning` slots are all held by jobs not
   * ended. Jobs of the tenant past their time to live are forgotten first.
   */
  async create(job: BacktestJobDoc, maxRunning: number): Promise<boolean> {
    await this.forgetExpired(job.tenantId);
    for (let slot = 0; slot < maxRunning; slot += 1) {
      const _id = `${job.tenantId}#${slot}`;
      if (await this.take({ _id, tenantId: job.tenantId, jobId: job._id, takenAt: this.now() })) {
        await this.jobs.insertOne(job);
        return true;
      }
      const held = await this.slots.findOne({ _id });
      if (held && (await this.ended(held.jobId))) {
        // The holder ended: free its slot (only if it still holds it) and try once more; a concurrent taker may win.
        await this.slots.deleteOne({ _id, jobId: held.jobId });
        if (await this.take({ _id, tenantId: job.tenantId, jobId: job._id, takenAt: this.now() })) {
          await this.jobs.insertOne(job);
          return true;
        }
      }
    }
    return false;
  }

  /** Undoes `create` when the job could not be handed to the moderators. */
  async discard(job: BacktestJobDoc): Promise<void> {
    await this.jobs.deleteOne({ _id: job._id });
    const slots = await this.slots.find({ tenantId: job.tenantId }).toArray();
    for (const slot of slots) if (slot.jobId === job._id) await this.slots.deleteOne({ _id: slot._id, jobId: job._id });
  }

  /** A job of the tenant with its run, or null (unknown, another tenant's, or past its time to live). */
  async get(tenantId: string, jobId: string): Promise<BacktestState | null> {
    const job = await this.jobs.findOne({ _id: jobId });
    if (!job || job.tenantId !== tenantId || job.expiresAt.getTime() <= this.now().getTime()) return null;
    const run = await this.runs.findOne({ _id: jobId });
    return { job, run, ...this.statusOf(job, run) };
  }

  /** A job of the tenant with its run, past its time to live too (while not yet forgotten): `expired` says which. */
  async find(tenantId: string, jobId: string): Promise<(BacktestState & { expired: boolean }) | null> {
    const job = await this.jobs.findOne({ _id: jobId });
    if (!job || job.tenantId !== tenantId) return null;
    const run = await this.runs.findOne({ _id: jobId });
    return { job, run, ...this.statusOf(job, run), expired: job.expiresAt.getTime() <= this.now().getTime() };
  }

  /** The tenant's jobs within their time to live, newest first, without their results. */
  async list(tenantId: string): Promise<BacktestState[]> {
    const now = this.now().getTime();
    const jobs = (await this.jobs.find({ tenantId }, { projection: { rules: 0 } }).toArray())
      .filter((job) => job.expiresAt.getTime() > now)
      .sort((a, b) => (a._id < b._id ? 1 : -1))
      .slice(0, MAX_LISTED);
    return Promise.all(
      jobs.map(async (job) => {
        const run = await this.runs.findOne({ _id: job._id }, { projection: { result: 0 } });
        return { job, run, ...this.statusOf(job, run) };
      }),
    );
  }

  /** Asks the runner to stop at its next batch; a job that ended stays as it ended. */
  async cancel(state: BacktestState): Promise<BacktestState> {
    if (TERMINAL_BACKTEST_STATUSES.includes(state.status) || state.job.cancelRequestedAt) return state;
    const cancelRequestedAt = this.now();
    // Only the gateway writes a job, and only here after its insert: no concurrent writer to lose.
    await this.jobs.updateOne({ _id: state.job._id }, { $set: { cancelRequestedAt } });
    const job = { ...state.job, cancelRequestedAt };
    return { ...state, job, ...this.statusOf(job, state.run) };
  }

  /**
   * Queued until a runner starts it; a queued job cancelled is cancelled at once (its runner will only record it). A
   * run whose runner went silent for longer than BACKTEST_LIMITS.stallMs failed (`runner_lost`): the next runner to
   * pick it up records the same.
   */
  statusOf(job: BacktestJobDoc, run: BacktestRunDoc | null): { status: BacktestStatus; error?: BacktestFailure } {
    if (!run) return { status: job.cancelRequestedAt ? 'cancelled' : 'queued' };
    if (run.status !== 'running') return { status: run.status, ...(run.error ? { error: run.error } : {}) };
    if (this.now().getTime() - run.heartbeatAt.getTime() > BACKTEST_LIMITS.stallMs)
      return { status: 'failed', error: 'runner_lost' };
    return { status: 'running' };
  }

  private async take(slot: SlotDoc): Promise<boolean> {
    try {
      await this.slots.insertOne(slot);
      return true;
    } catch (err) {
      if ((err as { code?: unknown }).code === 11000) return false;
      throw err;
    }
  }

  private async ended(jobId: string): Promise<boolean> {
    const job = await this.jobs.findOne({ _id: jobId }, { projection: { rules: 0 } });
    if (!job) return true;
    const run = await this.runs.findOne({ _id: jobId }, { projection: { result: 0 } });
    return TERMINAL_BACKTEST_STATUSES.includes(this.statusOf(job, run).status);
  }

  private async forgetExpired(tenantId: string): Promise<void> {
    const now = this.now().getTime();
    const jobs = await this.jobs.find({ tenantId }, { projection: { _id: 1, expiresAt: 1 } }).toArray();
    for (const job of jobs) if (job.expiresAt.getTime() <= now) await this.jobs.deleteOne({ _id: job._id });
  }
}
