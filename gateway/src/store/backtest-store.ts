import {
  BACKTEST_LIMITS,
  COLLECTIONS,
  TERMINAL_BACKTEST_STATUSES,
  type BacktestFailure,
  type BacktestJobDoc,
  type BacktestRunDoc,
  type BacktestStatus,
} from '@vigil/proto';
import type { Db } from 'mongodb';
import { BatchJobStore, type BatchJobKind, type BatchJobState, type BatchJobStoreOptions } from './batch-job-store';

/** A job with its run, as the API shows it. */
export type BacktestState = BatchJobState<BacktestJobDoc, BacktestRunDoc, BacktestStatus, BacktestFailure>;

/**
 * Backtests: a tenant may run `maxRunning` at once, one slot each (`<tenantId>#<n>`); jobs and their runs live until
 * `expiresAt`. Listed at most 50, read without their rules and results.
 */
const BACKTEST_KIND: BatchJobKind<BacktestJobDoc, BacktestRunDoc, BacktestStatus, BacktestFailure> = {
  collections: { jobs: COLLECTIONS.backtests, slots: COLLECTIONS.backtestSlots, runs: COLLECTIONS.backtestRuns },
  terminal: TERMINAL_BACKTEST_STATUSES,
  slot: { id: (tenantId, n) => `${tenantId}#${n}`, withTenant: true },
  listed: 50,
  expires: true,
  summary: { job: { rules: 0 }, run: { result: 0 } },
  /**
   * Queued until a runner starts it; a queued job cancelled is cancelled at once (its runner will only record it). A
   * run whose runner went silent for longer than BACKTEST_LIMITS.stallMs failed (`runner_lost`): the next runner to
   * pick it up records the same.
   */
  statusOf(job, run, now) {
    if (!run) return { status: job.cancelRequestedAt ? 'cancelled' : 'queued' };
    if (run.status !== 'running') return { status: run.status, ...(run.error ? { error: run.error } : {}) };
    if (now.getTime() - run.heartbeatAt.getTime() > BACKTEST_LIMITS.stallMs)
      return { status: 'failed', error: 'runner_lost' };
    return { status: 'running' };
  },
};

/** Backtest jobs (the gateway writes them, a moderator reads them) and their running slots. */
export class BacktestStore extends BatchJobStore<BacktestJobDoc, BacktestRunDoc, BacktestStatus, BacktestFailure> {
  constructor(db: Db, options?: BatchJobStoreOptions) {
    super(db, BACKTEST_KIND, options);
  }
}
