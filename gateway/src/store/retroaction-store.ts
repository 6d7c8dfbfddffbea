import {
  COLLECTIONS,
  RETROACTION_LIMITS,
  TERMINAL_RETROACTION_STATUSES,
  type RetroactionFailure,
  type RetroactionJobDoc,
  type RetroactionRunDoc,
  type RetroactionStatus,
} from '@vigil/proto';
import type { Collection, Db } from 'mongodb';

/** A job with its run, as the API shows it. */
export interface RetroactionState {
  job: RetroactionJobDoc;
  run: RetroactionRunDoc | null;
  status: RetroactionStatus;
  error?: RetroactionFailure;
}

interface SlotDoc {
  _id: string; // the tenant id
  jobId: string;
  takenAt: Date;
}

/**
 * Retroaction jobs (the gateway writes them, a moderator reads them) and the one running slot of each tenant, taken
 * by a unique-index insert (`_id`: the tenant), so two concurrent requests never both start one, even on FerretDB. A
 * slot whose job has ended is taken over. The moderators' runs (`retroaction_runs`) are read here, never written.
 */
export class RetroactionStore {
  private readonly jobs: Collection<RetroactionJobDoc>;
  private readonly slots: Collection<SlotDoc>;
  private readonly runs: Collection<RetroactionRunDoc>;

  constructor(db: Db) {
    this.jobs = db.collection(COLLECTIONS.retroactions);
    this.slots = db.collection(COLLECTIONS.retroactionSlots);
    this.runs = db.collection(COLLECTIONS.retroactionRuns);
  }

  async ensureIndexes(): Promise<void> {
    await this.jobs.createIndex({ tenantId: 1 }, { name: 'tenant' });
  }

  /** Takes the tenant's slot for `job` and stores it; false when another retroaction of the tenant has not ended. */
  async create(job: RetroactionJobDoc): Promise<boolean> {
    const slot = { _id: job.tenantId, jobId: job._id, takenAt: new Date() };
    if (!(await this.take(slot))) {
      const held = await this.slots.findOne({ _id: job.tenantId });
      if (!held || !(await this.ended(held.jobId))) return false;
      // The holder ended: free its slot (only if it still holds it) and try once more; a concurrent taker may win.
      await this.slots.deleteOne({ _id: job.tenantId, jobId: held.jobId });
      if (!(await this.take(slot))) return false;
    }
    await this.jobs.insertOne(job);
    return true;
  }

  /** Undoes `create` when the job could not be handed to the moderators. */
  async discard(job: RetroactionJobDoc): Promise<void> {
    await this.jobs.deleteOne({ _id: job._id });
    await this.slots.deleteOne({ _id: job.tenantId, jobId: job._id });
  }

  /** A job of the tenant with its run, or null. */
  async get(tenantId: string, jobId: string): Promise<RetroactionState | null> {
    const job = await this.jobs.findOne({ _id: jobId });
    if (!job || job.tenantId !== tenantId) return null;
    const run = await this.runs.findOne({ _id: jobId });
    return { job, run, ...statusOf(job, run) };
  }

  /** The tenant's retroactions, newest first, at most RETROACTION_LIMITS.listed. */
  async list(tenantId: string): Promise<RetroactionState[]> {
    const jobs = (await this.jobs.find({ tenantId }).toArray())
      .sort((a, b) => (a._id < b._id ? 1 : -1))
      .slice(0, RETROACTION_LIMITS.listed);
    return Promise.all(
      jobs.map(async (job) => {
        const run = await this.runs.findOne({ _id: job._id });
        return { job, run, ...statusOf(job, run) };
      }),
    );
  }

  /** Asks the runner to stop at its next batch; a job that ended stays as it ended. */
  async cancel(state: RetroactionState): Promise<RetroactionState> {
    if (TERMINAL_RETROACTION_STATUSES.includes(state.status) || state.job.cancelRequestedAt) return state;
    const cancelRequestedAt = new Date();
    // Only the gateway writes a job, and only here after its insert: no concurrent writer to lose.
    await this.jobs.updateOne({ _id: state.job._id }, { $set: { cancelRequestedAt } });
    const job = { ...state.job, cancelRequestedAt };
    return { ...state, job, ...statusOf(job, state.run) };
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
    const job = await this.jobs.findOne({ _id: jobId });
    if (!job) return true;
    const run = await this.runs.findOne({ _id: jobId });
    return TERMINAL_RETROACTION_STATUSES.includes(statusOf(job, run).status);
  }
}

/**
 * Queued until a runner starts it; a queued job cancelled is cancelled at once (its runner will only record it). A
 * running job whose runner died stays running until the next runner resumes it (its progress is stored).
 */
function statusOf(
  job: RetroactionJobDoc,
  run: RetroactionRunDoc | null,
): { status: RetroactionStatus; error?: RetroactionFailure } {
  if (!run) return { status: job.cancelRequestedAt ? 'cancelled' : 'queued' };
  return { status: run.status, ...(run.error ? { error: run.error } : {}) };
}
