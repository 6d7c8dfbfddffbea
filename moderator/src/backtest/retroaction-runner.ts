import {
  RETROACTION_LIMITS,
  ulid,
  type RetroactionCounts,
  type RetroactionJobDoc,
  type RetroactionRunDoc,
} from '@vigil/proto';
import type { Logger } from 'pino';
import type { RerunOutcome, RetroactOptions } from '../service/rerun';
import type { BacktestStore } from './backtest-store';
import { BatchJobInterrupted, runBatchJob, type JobOutcome } from './batch-job';
import type { RetroactionStore } from './retroaction-store';
import { Pacer, type LivePriority } from './pacer';

export interface RetroactionRunnerOptions {
  store: RetroactionStore;
  /** The backtests' selection: a retroaction selects what its backtest selected, by the same query. */
  selection: Pick<BacktestStore, 'select'>;
  /** The re-run's moderation path (`retroact` in `service/rerun.ts`). */
  retroact: (
    input: { tenantId: string; recordId: string; moderationId: string; correlationId: string; commandId: string },
    options: RetroactOptions,
  ) => Promise<RerunOutcome>;
  log: Logger;
  /** Records moderated per second at most, per job. */
  ratePerSecond: number;
  /** Live moderations come first: the job's background rate beside them. */
  live?: LivePriority;
  /** Records moderated at once per job. */
  concurrency: number;
  /** Records between two progress writes (each also reads whether the job was cancelled). */
  batchSize: number;
  /** Hears each record gone through (metrics). */
  onRecord?: (outcome: keyof RetroactionCounts) => void;
  /** Hears each run's end (metrics). */
  onJob?: (outcome: JobOutcome) => void;
}

const COUNTED: Record<Exclude<RerunOutcome, 'version_replaced' | 'recorded'>, keyof RetroactionCounts> = {
  toFlagged: 'toFlagged',
  toCompliant: 'toCompliant',
  unchanged: 'unchanged',
  manual: 'heldByHumans',
  gone: 'skipped',
};

/**
 * Runs one retroaction: the live version over the records its backtest selected, each through the re-run's
 * moderation path (`retroact` in `service/rerun.ts`), at `ratePerSecond` at most and as a tenant of its own in the
 * engine.
 * The selection is stored once, and progress and counts after each batch: a run interrupted (restart, rebalance)
 * resumes after its last stored batch. Each record's command id is `<jobId>:<recordId>`, so a record of the batch in
 * flight when it stopped is written once however often it is gone through.
 */
export class RetroactionRunner {
  constructor(private readonly options: RetroactionRunnerOptions) {}

  async run(jobId: string, shouldStop: () => boolean): Promise<void> {
    const { store, log, onJob } = this.options;
    await runBatchJob({ kind: 'retroaction', store, log, onJob }, jobId, (job, begin) =>
      this.applyAll(job, begin.state, shouldStop),
    );
  }

  private async applyAll(
    job: RetroactionJobDoc,
    state: RetroactionRunDoc,
    shouldStop: () => boolean,
  ): Promise<'succeeded' | 'failed' | 'cancelled'> {
    const { store, ratePerSecond, concurrency, batchSize } = this.options;
    if (await store.cancelRequested(job._id)) {
      await store.finish(job._id, 'cancelled');
      return 'cancelled';
    }
    const counts = { ...state.counts };
    let processed = state.processed;
    let selected = state.selected;
    const pacer = new Pacer(ratePerSecond, this.options.live);
    if (selected === undefined) {
      const { ids } = await this.options.selection.select(job, () => pacer.selectionBatch());
      await store.saveSelection(job._id, ids);
      selected = ids.length;
      await store.progress(job._id, { selected, processed, counts });
    }
    const options: RetroactOptions = {
      version: job.version,
      withoutAi: !job.ai,
      engineTenantId: `retroaction:${job.tenantId}`,
    };
    while (processed < selected) {
      const chunk = await store.selectionChunk(job._id, Math.floor(processed / RETROACTION_LIMITS.chunk));
      const offset = processed % RETROACTION_LIMITS.chunk;
      const batch = chunk.slice(offset, offset + batchSize);
      if (batch.length === 0) break; // the stored selection ends early: nothing more to go through
      for (let from = 0; from < batch.length; from += concurrency) {
        if (shouldStop()) throw new BatchJobInterrupted('runner stopping');
        const slice = batch.slice(from, from + concurrency);
        await pacer.turn(slice.length);
        const outcomes = await Promise.all(
          slice.map((recordId) =>
            this.options.retroact(
              {
                tenantId: job.tenantId,
                recordId,
                moderationId: `mod_${ulid()}`,
                correlationId: job._id,
                commandId: `${job._id}:${recordId}`,
              },
              options,
            ),
          ),
        );
        for (const outcome of outcomes) {
          if (outcome === 'version_replaced' || outcome === 'recorded') continue;
          const key = COUNTED[outcome];
          counts[key] += 1;
          this.options.onRecord?.(key);
        }
        if (outcomes.includes('version_replaced')) {
          // Another version went live meanwhile: what was predicted no longer holds. Stop where it is.
          await store.progress(job._id, { processed: processed + from + slice.length, counts });
          await store.finish(job._id, 'failed', { error: 'version_replaced' });
          return 'failed';
        }
      }
      processed += batch.length;
      await store.progress(job._id, { processed, counts });
      if (await store.cancelRequested(job._id)) {
        await store.finish(job._id, 'cancelled');
        return 'cancelled';
      }
    }
    await store.finish(job._id, 'succeeded');
    return 'succeeded';
  }
}
