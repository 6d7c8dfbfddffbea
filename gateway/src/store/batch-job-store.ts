import type { Collection, Db, Document } from 'mongodb';

/** The fields every batch job (a backtest, a retroaction) has. */
export interface BatchJobBase {
  _id: string;
  tenantId: string;
  cancelRequestedAt?: Date;
  expiresAt?: Date;
}

/** The fields every run of a batch job has. */
export interface BatchRunBase<Status extends string> {
  _id: string;
  status: Status;
}

/** A job with its run, as the API shows it. */
export interface BatchJobState<Job, Run, Status extends string, Failure extends string> {
  job: Job;
  run: Run | null;
  status: Status;
  error?: Failure;
}

/** What tells one kind of batch job from another. */
export interface BatchJobKind<Job, Run, Status extends string, Failure extends string> {
  collections: { jobs: string; slots: string; runs: string };
  /** Statuses after which a job holds no slot. */
  terminal: readonly string[];
  /** The job's status from its run, at `now`. */
  statusOf(job: Job, run: Run | null, now: Date): { status: Status; error?: Failure };
  /** The `_id` of the tenant's slot `n`, and whether the slot document carries the tenant. */
  slot: { id(tenantId: string, n: number): string; withTenant: boolean };
  /** Jobs listed at most. */
  listed: number;
  /** Jobs past `expiresAt` are forgotten (the kind has a time to live). */
  expires: boolean;
  /** Fields left out when jobs and runs are read only for their status. */
  summary?: { job?: Document; run?: Document };
}

interface SlotDoc {
  _id: string;
  tenantId?: string;
  jobId: string;
  takenAt: Date;
}

/**
 * Batch jobs of one kind (the gateway writes them, a moderator reads them) and the running slots of each tenant. A
 * tenant may have `maxRunning` jobs not ended: each holds a slot, taken by a unique-index insert, so two concurrent
 * requests never both take the last one, even on FerretDB. A slot whose job has ended is taken over. The moderators'
 * runs are read here, never written.
 */
export class BatchJobStore<
  Job extends BatchJobBase,
  Run extends BatchRunBase<string>,
  Status extends string,
  Failure extends string,
> {
  private readonly jobs: Collection<BatchJobBase>;
  private readonly slots: Collection<SlotDoc>;
  private readonly runs: Collection<BatchRunBase<string>>;

  constructor(
    db: Db,
    private readonly kind: BatchJobKind<Job, Run, Status, Failure>,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.jobs = db.collection(kind.collections.jobs);
    this.slots = db.collection(kind.collections.slots);
    this.runs = db.collection(kind.collections.runs);
  }

  async ensureIndexes(): Promise<void> {
    await this.jobs.createIndex({ tenantId: 1 }, { name: 'tenant' });
  }

  /**
   * Takes a running slot for `job` and stores it; false when the tenant's `maxRunning` slots are all held by jobs not
   * ended. Jobs of the tenant past their time to live are forgotten first.
   */
  async create(job: Job, maxRunning = 1): Promise<boolean> {
    if (this.kind.expires) await this.forgetExpired(job.tenantId);
    for (let n = 0; n < maxRunning; n += 1) {
      const _id = this.kind.slot.id(job.tenantId, n);
      const slot = (): SlotDoc => ({
        _id,
        ...(this.kind.slot.withTenant ? { tenantId: job.tenantId } : {}),
        jobId: job._id,
        takenAt: this.now(),
      });
      if (await this.take(slot())) {
        await this.jobs.insertOne(job);
        return true;
      }
      const held = await this.slots.findOne({ _id });
      if (held && (await this.ended(held.jobId))) {
        // The holder ended: free its slot (only if it still holds it) and try once more; a concurrent taker may win.
        await this.slots.deleteOne({ _id, jobId: held.jobId });
        if (await this.take(slot())) {
          await this.jobs.insertOne(job);
          return true;
        }
      }
    }
    return false;
  }

  /** Undoes `create` when the job could not be handed to the moderators. */
  async discard(job: Job): Promise<void> {
    await this.jobs.deleteOne({ _id: job._id });
    await this.slots.deleteMany({ jobId: job._id });
  }

  /** A job of the tenant with its run, or null (unknown, another tenant's, or past its time to live). */
  async get(tenantId: string, jobId: string): Promise<BatchJobState<Job, Run, Status, Failure> | null> {
    const found = await this.find(tenantId, jobId);
    if (!found || found.expired) return null;
    return { job: found.job, run: found.run, status: found.status, ...(found.error ? { error: found.error } : {}) };
  }

  /** A job of the tenant with its run, past its time to live too (while not yet forgotten): `expired` says which. */
  async find(
    tenantId: string,
    jobId: string,
  ): Promise<(BatchJobState<Job, Run, Status, Failure> & { expired: boolean }) | null> {
    const job = (await this.jobs.findOne({ _id: jobId })) as Job | null;
    if (!job || job.tenantId !== tenantId) return null;
    const run = (await this.runs.findOne({ _id: jobId })) as Run | null;
    return { job, run, ...this.statusOf(job, run), expired: this.isExpired(job, this.now().getTime()) };
  }

  /** The tenant's jobs within their time to live, newest first, at most `listed`, read for their status. */
  async list(tenantId: string): Promise<Array<BatchJobState<Job, Run, Status, Failure>>> {
    const now = this.now().getTime();
    const jobs = ((await this.jobs.find({ tenantId }, this.projection('job')).toArray()) as Job[])
      .filter((job) => !this.isExpired(job, now))
      .sort((a, b) => (a._id < b._id ? 1 : -1))
      .slice(0, this.kind.listed);
    return Promise.all(
      jobs.map(async (job) => {
        const run = (await this.runs.findOne({ _id: job._id }, this.projection('run'))) as Run | null;
        return { job, run, ...this.statusOf(job, run) };
      }),
    );
  }

  /** Asks the runner to stop at its next batch; a job that ended stays as it ended. */
  async cancel(state: BatchJobState<Job, Run, Status, Failure>): Promise<BatchJobState<Job, Run, Status, Failure>> {
    if (this.kind.terminal.includes(state.status) || state.job.cancelRequestedAt) return state;
    const cancelRequestedAt = this.now();
    // Only the gateway writes a job, and only here after its insert: no concurrent writer to lose.
    await this.jobs.updateOne({ _id: state.job._id }, { $set: { cancelRequestedAt } });
    const job = { ...state.job, cancelRequestedAt };
    return { ...state, job, ...this.statusOf(job, state.run) };
  }

  /** The job's status from its run, now. */
  statusOf(job: Job, run: Run | null): { status: Status; error?: Failure } {
    return this.kind.statusOf(job, run, this.now());
  }

  private isExpired(job: Job, now: number): boolean {
    return this.kind.expires && job.expiresAt !== undefined && job.expiresAt.getTime() <= now;
  }

  private projection(of: 'job' | 'run'): { projection?: Document } {
    const fields = this.kind.summary?.[of];
    return fields ? { projection: fields } : {};
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
    const job = (await this.jobs.findOne({ _id: jobId }, this.projection('job'))) as Job | null;
    if (!job) return true;
    const run = (await this.runs.findOne({ _id: jobId }, this.projection('run'))) as Run | null;
    return this.kind.terminal.includes(this.statusOf(job, run).status);
  }

  private async forgetExpired(tenantId: string): Promise<void> {
    const now = this.now().getTime();
    const jobs = await this.jobs.find({ tenantId }, { projection: { _id: 1, expiresAt: 1 } }).toArray();
    for (const job of jobs) if (this.isExpired(job as Job, now)) await this.jobs.deleteOne({ _id: job._id });
  }
}
