import type { Collection, Document } from 'mongodb';
import type { Logger } from 'pino';
import { AppError } from '../domain/errors';
import { guarded } from '../store/mongo-errors';

/** The job stopped because its runner must let go (shutdown, lost partition): it is left for the next runner. */
export class BatchJobInterrupted extends Error {}

/** How a run ended. */
export type RunEnd = 'succeeded' | 'failed' | 'cancelled';

/**
 * How one pick-up of a job ended, as `onJob` hears it: a run end; `interrupted` (left for the next runner); or
 * `unrecorded`, a failure whose end the store did not take.
 */
export type JobOutcome = RunEnd | 'interrupted' | 'unrecorded';

/** A document keyed by a string `_id`. */
type KeyedDoc = { _id: string } & Document;

interface JobBase {
  _id: string;
  tenantId: string;
  cancelRequestedAt?: Date;
}

interface RunBase {
  _id: string;
  heartbeatAt: Date;
}

/**
 * The part of a batch job's store (backtest, retroaction) every kind shares: the gateway's job read, its cancel
 * request, the run's one-time insert, its progress (the runner's heartbeat) and its end. A run is one document per
 * job, written only by the runner that holds the job's Kafka message.
 */
export abstract class BatchRunStore<Job extends JobBase, Run extends RunBase, Failure extends string> {
  /** The gateway's jobs, read only: each kind opens its own handle, so that what reads them is seen in its file. */
  protected abstract readonly jobs: Collection<Job>;
  /** The runs, this service's own. */
  protected abstract readonly runs: Collection<Run>;

  constructor(protected readonly now: () => Date = () => new Date()) {}

  /** The same collections as untyped documents, for the reads and writes every kind shares. */
  private get jobDocs(): Collection<KeyedDoc> {
    return this.jobs as unknown as Collection<KeyedDoc>;
  }

  private get runDocs(): Collection<KeyedDoc> {
    return this.runs as unknown as Collection<KeyedDoc>;
  }

  async ensureIndexes(): Promise<void> {
    await guarded(() => this.runDocs.createIndex({ tenantId: 1 }, { name: 'tenant' }));
  }

  job(jobId: string): Promise<Job | null> {
    return guarded(() => this.jobDocs.findOne({ _id: jobId }) as Promise<Job | null>);
  }

  async cancelRequested(jobId: string): Promise<boolean> {
    const job = await guarded(() => this.jobDocs.findOne({ _id: jobId }, { projection: { cancelRequestedAt: 1 } }));
    // A job the gateway forgot (expired) is as good as cancelled.
    return !job || job.cancelRequestedAt !== undefined;
  }

  /** Ends the run. */
  async finish(jobId: string, status: RunEnd, outcome: Document & { error?: Failure } = {}): Promise<void> {
    const now = this.now();
    await guarded(() =>
      this.runDocs.updateOne({ _id: jobId }, { $set: { status, finishedAt: now, heartbeatAt: now, ...outcome } }),
    );
  }

  /** Stores progress, which is also the runner's heartbeat. */
  protected async setProgress(jobId: string, fields: Document): Promise<void> {
    await guarded(() => this.runDocs.updateOne({ _id: jobId }, { $set: { ...fields, heartbeatAt: this.now() } }));
  }

  /** Inserts a first run; false when another runner inserted it first. */
  protected insertRun(run: Run): Promise<boolean> {
    return guarded(async () => {
      try {
        await this.runDocs.insertOne(run);
        return true;
      } catch (err) {
        if ((err as { code?: unknown }).code === 11000) return false;
        throw err;
      }
    });
  }
}

/** What `runBatchJob` needs of a store. */
interface RunnableStore<Job, Begin> {
  job(jobId: string): Promise<Job | null>;
  begin(job: Job): Promise<Begin>;
  finish(jobId: string, status: 'failed', outcome: { error: 'engine_error' }): Promise<void>;
}

/**
 * Runs one batch job of `kind` to its end (succeeded, failed or cancelled), or throws when its runner must let go,
 * leaving the run for the next runner: BatchJobInterrupted, or a retriable AppError (the store out of reach) met by
 * the work. A job that is gone or will not start is logged and left. One whose work throws anything else is failed
 * (`engine_error`). When that end is not stored, the run would stay `running` with its tenant's slot held. So a
 * retriable failure of it is thrown too, and the message comes again (`begin` bounds the attempts). A refusal is
 * logged and counted (`unrecorded`) and the job set aside, so the jobs behind it run.
 */
export async function runBatchJob<
  Job extends { tenantId: string },
  Begin extends { run: true; attempt: number } | { run: false; why: string },
>(
  options: {
    kind: string;
    store: RunnableStore<Job, Begin>;
    log: Logger;
    onJob?: (outcome: JobOutcome) => void;
  },
  jobId: string,
  work: (job: Job, begin: Extract<Begin, { run: true }>) => Promise<RunEnd>,
): Promise<void> {
  const { kind, store, log } = options;
  const job = await store.job(jobId);
  if (!job) return; // forgotten: nothing to run
  const begin = await store.begin(job);
  if (!begin.run) {
    log.info({ jobId, tenantId: job.tenantId, why: begin.why }, `${kind} not started`);
    return;
  }
  const { tenantId } = job;
  log.info({ jobId, tenantId, attempt: begin.attempt }, `${kind} started`);
  let failure: unknown;
  try {
    const outcome = await work(job, begin as Extract<Begin, { run: true }>);
    options.onJob?.(outcome);
    log.info({ jobId, tenantId, outcome }, `${kind} finished`);
    return;
  } catch (err) {
    if (err instanceof BatchJobInterrupted || retriable(err)) {
      options.onJob?.('interrupted');
      if (!(err instanceof BatchJobInterrupted)) log.warn({ err, jobId, tenantId }, `${kind} left for the next runner`);
      throw err;
    }
    failure = err;
  }
  log.error({ err: failure, jobId, tenantId }, `${kind} failed`);
  try {
    await store.finish(jobId, 'failed', { error: 'engine_error' });
  } catch (err) {
    options.onJob?.('unrecorded');
    if (retriable(err)) {
      log.error({ err, jobId, tenantId }, `${kind} failure not stored, left for the next runner`);
      throw err;
    }
    log.error({ err, jobId, tenantId }, `${kind} failure not stored, set aside`);
    return;
  }
  options.onJob?.('failed');
}

/** A failure worth trying again later (the store out of reach), never one of the job itself. */
function retriable(err: unknown): boolean {
  return err instanceof AppError && err.retriable;
}
