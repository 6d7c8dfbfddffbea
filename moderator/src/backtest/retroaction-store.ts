import {
  COLLECTIONS,
  RETROACTION_LIMITS,
  TERMINAL_RETROACTION_STATUSES,
  type RetroactionCounts,
  type RetroactionFailure,
  type RetroactionJobDoc,
  type RetroactionRunDoc,
} from '@vigil/proto';
import { zeroRetroactionCounts, type RetroactionItemsDoc } from './retroaction-docs';
import type { Collection, Db } from 'mongodb';
import { guarded } from '../store/mongo-errors';
import { BatchRunStore, type RunEnd } from './batch-job';

/** Where a runner picking a retroaction up stands: a resumed run goes on from its stored progress and counts. */
export type RetroBegin =
  | { run: true; attempt: number; state: RetroactionRunDoc }
  | { run: false; why: 'gone' | 'finished' | 'too_many_attempts' };

/** A job's run as its first attempt starts it, at `now`. */
export function firstRetroactionRun(job: Pick<RetroactionJobDoc, '_id' | 'tenantId'>, now: Date): RetroactionRunDoc {
  return {
    _id: job._id,
    tenantId: job.tenantId,
    status: 'running',
    attempts: 1,
    processed: 0,
    counts: zeroRetroactionCounts(),
    startedAt: now,
    heartbeatAt: now,
  };
}

/**
 * What a retroaction's runner reads and writes besides the records it moderates: the gateway's job (`retroactions`),
 * and its own run (`retroaction_runs`) and selection (`retroaction_items`). Only the runner holding the job's Kafka
 * message writes them. Unlike a backtest's, a run resumes: its progress and counts are stored with each batch.
 */
export class RetroactionStore extends BatchRunStore<RetroactionJobDoc, RetroactionRunDoc, RetroactionFailure> {
  protected readonly jobs: Collection<RetroactionJobDoc>;
  protected readonly runs: Collection<RetroactionRunDoc>;
  private readonly items: Collection<RetroactionItemsDoc>;

  constructor(db: Db, now?: () => Date) {
    super(now);
    this.jobs = db.collection(COLLECTIONS.retroactions);
    this.runs = db.collection(COLLECTIONS.retroactionRuns);
    this.items = db.collection(COLLECTIONS.retroactionItems);
  }

  override async ensureIndexes(): Promise<void> {
    await super.ensureIndexes();
    await guarded(() => this.items.createIndex({ jobId: 1 }, { name: 'job' }));
  }

  /** Starts a run, or resumes it where its last batch ended (a restart, a rebalance); bounded in attempts. */
  async begin(job: RetroactionJobDoc): Promise<RetroBegin> {
    const now = this.now();
    const existing = await guarded(() => this.runs.findOne({ _id: job._id }));
    if (!existing) {
      const state = firstRetroactionRun(job, now);
      const inserted = await this.insertRun(state);
      return inserted ? { run: true, attempt: 1, state } : this.begin(job);
    }
    if (TERMINAL_RETROACTION_STATUSES.includes(existing.status)) return { run: false, why: 'finished' };
    if (existing.attempts >= RETROACTION_LIMITS.attempts) {
      await this.finish(job._id, 'failed', { error: 'too_many_attempts' });
      return { run: false, why: 'too_many_attempts' };
    }
    const state: RetroactionRunDoc = { ...existing, attempts: existing.attempts + 1, heartbeatAt: now };
    await guarded(() => this.runs.replaceOne({ _id: job._id }, state));
    return { run: true, attempt: state.attempts, state };
  }

  /** Stores the selection in chunks (each write by `_id`, so a run stopped half-way writes the same ids again). */
  async saveSelection(jobId: string, ids: readonly string[]): Promise<void> {
    for (let at = 0, n = 0; at < ids.length; at += RETROACTION_LIMITS.chunk, n += 1) {
      const doc: RetroactionItemsDoc = {
        _id: `${jobId}#${n}`,
        jobId,
        ids: ids.slice(at, at + RETROACTION_LIMITS.chunk),
      };
      await guarded(() => this.items.replaceOne({ _id: doc._id }, doc, { upsert: true }));
    }
  }

  /** Chunk `n` of the selection (one read by `_id`). */
  async selectionChunk(jobId: string, n: number): Promise<string[]> {
    const doc = await guarded(() => this.items.findOne({ _id: `${jobId}#${n}` }));
    return doc?.ids ?? [];
  }

  /** Progress and counts, which are also the runner's heartbeat and where a resumed run starts. */
  async progress(
    jobId: string,
    progress: { selected?: number; processed: number; counts: RetroactionCounts },
  ): Promise<void> {
    await this.setProgress(jobId, progress);
  }

  /** Ends the run; its stored selection is no longer needed. */
  override async finish(jobId: string, status: RunEnd, outcome: { error?: RetroactionFailure } = {}): Promise<void> {
    await super.finish(jobId, status, outcome);
    await guarded(() => this.items.deleteMany({ jobId }));
  }
}
