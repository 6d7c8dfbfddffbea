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
  /** Until the job's start command is known to be sent (`sent`): a slot left so was never handed over. */
  unsent?: true;
}

/**
 * How long after it was taken a slot whose job's start command is still unsent may be released (ms). Only a request
 * that failed to hand its job over, and to discard it, leaves one so. This is far above any request's hand-over: its
 * send times out after KAFKA_SEND_TIMEOUT_MS (10 s by default).
 */
export const UNSENT_RELEASE_MS = 10 * 60_000;

/** A write of a job's hand-over that failed: `discard` (after a failed insert or send) or `sent`. */
export type BatchJobWrite = 'discard' | 'sent';

export interface BatchJobStoreOptions {
  now?: () => Date;
  /** Hears a hand-over write that failed (logged and counted by the app): the store goes on without it. */
  onWriteFailed?: (write: BatchJobWrite, job: Pick<BatchJobBase, '_id' | 'tenantId'>, err: unknown) => void;
}

/**
 * Batch jobs of one kind (the gateway writes them, a moderator reads them) and the running slots of each tenant. A
 * tenant may have `maxRunning` jobs not ended: each holds a slot, taken by a unique-index insert, so two concurrent
 * requests never both take the last one, even on FerretDB. A slot whose job has ended is taken over. So is one whose
 * job was never handed over: still unsent UNSENT_RELEASE_MS after it was taken, with no run. The moderators' runs are
 * read here, never written.
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
  private readonly now: () => Date;

  constructor(
    db: Db,
    private readonly kind: BatchJobKind<Job, Run, Status, Failure>,
    private readonly options: BatchJobStoreOptions = {},
  ) {
    this.jobs = db.collection(kind.collections.jobs);
    this.slots = db.collection(kind.collections.slots);
    this.runs = db.collection(kind.collections.runs);
    this.now = options.now ?? (() => new Date());
  }

  async ensureIndexes(): Promise<void> {
    await this.jobs.createIndex({ tenantId: 1 }, { name: 'tenant' });
    // `sent` and `discard` find a job's slot by its job: an equality FerretDB serves from this index.
    await this.slots.createIndex({ jobId: 1 }, { name: 'job' });
  }

  /**
   * Takes a running slot for `job` and stores it; false when the tenant's `maxRunning` slots are all held by jobs not
   * ended. Jobs of the tenant past their time to live are forgotten first. The slot stays unsent until `sent`.
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
        unsent: true,
      });
      if (await this.take(slot())) return this.insertJob(job);
      const held = await this.slots.findOne({ _id });
      if (held && (await this.ended(held))) {
        // The holder ended: free its slot (only if it still holds it) and try once more; a concurrent taker may win.
        await this.slots.deleteOne({ _id, jobId: held.jobId });
        if (await this.take(slot())) return this.insertJob(job);
      }
    }
    return false;
  }

  /** Notes that the job's start command was sent, so its slot is never released as unsent. */
  async sent(job: Job): Promise<void> {
    try {
      await this.slots.updateOne({ jobId: job._id }, { $unset: { unsent: '' } });
    } catch (err) {
      // The job runs all the same. Its slot may be released once UNSENT_RELEASE_MS passed, if it has not started by then.
      this.options.onWriteFailed?.('sent', job, err);
    }
  }

  /**
   * Undoes `create` when the job could not be handed to the moderators (a discard of what was never written does
   * nothing). False when a write failed, which is reported: the slot stays unsent, so it is released
   * UNSENT_RELEASE_MS after it was taken.
   */
  async discard(job: Job): Promise<boolean> {
    try {
      await this.jobs.deleteOne({ _id: job._id });
      await this.slots.deleteMany({ jobId: job._id });
      return true;
    } catch (err) {
      this.options.onWriteFailed?.('discard', job, err);
      return false;
    }
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
    // Only the gateway writes a job after its insert, and only its cancel (here, or releasing its slot): a concurrent
    // write sets the same field, so the whole-document rewrite of FerretDB v1 loses nothing.
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

  /** Stores the job whose slot was just taken; a failed insert (maybe landed, its reply lost) discards both. */
  private async insertJob(job: Job): Promise<true> {
    try {
      await this.jobs.insertOne(job);
      return true;
    } catch (err) {
      await this.discard(job);
      throw err;
    }
  }

  /**
   * Whether the slot's job has ended, or was never handed over: its slot still unsent UNSENT_RELEASE_MS after it was
   * taken, and no run. That job is cancelled first, so a start command sent after all finds it cancelled and runs
   * nothing. A cancel that fails is thrown, and the slot stays held.
   */
  private async ended(slot: SlotDoc): Promise<boolean> {
    const { jobId } = slot;
    const job = (await this.jobs.findOne({ _id: jobId }, this.projection('job'))) as Job | null;
    if (!job) return true;
    const run = (await this.runs.findOne({ _id: jobId }, this.projection('run'))) as Run | null;
    if (this.kind.terminal.includes(this.statusOf(job, run).status)) return true;
    const unsentFor = this.now().getTime() - slot.takenAt.getTime();
    if (run || !slot.unsent || unsentFor < UNSENT_RELEASE_MS) return false;
    await this.jobs.updateOne({ _id: jobId }, { $set: { cancelRequestedAt: this.now() } });
    return true;
  }

  private async forgetExpired(tenantId: string): Promise<void> {
    const now = this.now().getTime();
    const jobs = await this.jobs.find({ tenantId }, { projection: { _id: 1, expiresAt: 1 } }).toArray();
    for (const job of jobs) if (this.isExpired(job as Job, now)) await this.jobs.deleteOne({ _id: job._id });
  }
}
