import {
  BACKTEST_LIMITS,
  COLLECTIONS,
  TERMINAL_BACKTEST_STATUSES,
  type BacktestFailure,
  type BacktestJobDoc,
  type BacktestResult,
  type BacktestRunDoc,
} from '@vigil/proto';
import type { Collection, Db, Filter } from 'mongodb';
import type { RecordState } from '../domain/record';
import type { UserState } from '../domain/user';
import type { FlaggedCountDoc } from '../store/event-store';
import { guarded } from '../store/mongo-errors';
import { sortBounds } from '../service/queries';
import type { UserNow } from './backtest-tally';
import { BatchRunStore, type RunEnd } from './batch-job';

/** Ids a selection reads per cursor batch: FerretDB streams the matches, a batch per getMore. */
const SELECT_BATCH = 1000;

/** Where a runner picking a job up stands. */
export type Begin =
  { run: true; attempt: number } | { run: false; why: 'gone' | 'finished' | 'cancelled' | BacktestFailure };

/**
 * What a backtest reads and writes. It reads the gateway's jobs (`backtests`) and the projections, and writes only its
 * runs (`backtest_runs`, one document per job, written by the runner that holds the job's Kafka message). Nothing else
 * is written: no event, no projection, no outbox row.
 */
export class BacktestStore extends BatchRunStore<BacktestJobDoc, BacktestRunDoc, BacktestFailure> {
  protected readonly jobs: Collection<BacktestJobDoc>;
  protected readonly runs: Collection<BacktestRunDoc>;
  private readonly records: Collection<RecordState>;
  private readonly users: Collection<UserState>;
  private readonly flaggedCounts: Collection<FlaggedCountDoc>;

  constructor(db: Db, now?: () => Date) {
    super(now);
    this.jobs = db.collection(COLLECTIONS.backtests);
    this.runs = db.collection(COLLECTIONS.backtestRuns);
    this.records = db.collection(COLLECTIONS.records);
    this.users = db.collection(COLLECTIONS.users);
    this.flaggedCounts = db.collection(COLLECTIONS.userFlaggedCounts);
  }

  /**
   * Starts a run, or starts it again from the beginning after its runner died or left (a restart, a rebalance): its
   * counts were in that runner's memory only. A run whose runner was silent for longer than BACKTEST_LIMITS.stallMs
   * was reported lost and stays failed; one started too often is failed rather than started again.
   */
  async begin(job: BacktestJobDoc): Promise<Begin> {
    if (job.expiresAt.getTime() <= this.now().getTime()) return { run: false, why: 'gone' };
    const now = this.now();
    await this.forgetExpired(job.tenantId);
    const existing = await guarded(() => this.runs.findOne({ _id: job._id }));
    if (!existing) {
      // Cancelled while queued: the gateway answered `cancelled` at once, and takes the tenant's slot back. The run
      // is recorded as cancelled, never started, so its status does not turn to `running` after the cancel.
      const stored = await this.job(job._id);
      if (!stored) return { run: false, why: 'gone' };
      if (stored.cancelRequestedAt) {
        const inserted = await this.insertRun({
          _id: job._id,
          tenantId: job.tenantId,
          status: 'cancelled',
          attempts: 0,
          processed: 0,
          startedAt: now,
          heartbeatAt: now,
          finishedAt: now,
          expiresAt: job.expiresAt,
        });
        return inserted ? { run: false, why: 'cancelled' } : this.begin(job);
      }
      const inserted = await this.insertRun({
        _id: job._id,
        tenantId: job.tenantId,
        status: 'running',
        attempts: 1,
        processed: 0,
        startedAt: now,
        heartbeatAt: now,
        expiresAt: job.expiresAt,
      });
      return inserted ? { run: true, attempt: 1 } : this.begin(job);
    }
    if (TERMINAL_BACKTEST_STATUSES.includes(existing.status)) return { run: false, why: 'finished' };
    if (now.getTime() - existing.heartbeatAt.getTime() > BACKTEST_LIMITS.stallMs) {
      await this.finish(job._id, 'failed', { error: 'runner_lost' });
      return { run: false, why: 'runner_lost' };
    }
    if (existing.attempts >= BACKTEST_LIMITS.attempts) {
      await this.finish(job._id, 'failed', { error: 'too_many_attempts' });
      return { run: false, why: 'too_many_attempts' };
    }
    const attempt = existing.attempts + 1;
    await guarded(() =>
      this.runs.replaceOne(
        { _id: job._id },
        { ...existing, status: 'running', attempts: attempt, processed: 0, startedAt: now, heartbeatAt: now },
      ),
    );
    return { run: true, attempt };
  }

  /** Runs of the tenant's jobs past their time to live (the gateway forgets the jobs likewise). */
  private async forgetExpired(tenantId: string): Promise<void> {
    const now = this.now().getTime();
    const runs = await guarded(() => this.runs.find({ tenantId }, { projection: { _id: 1, expiresAt: 1 } }).toArray());
    for (const run of runs)
      if (run.expiresAt.getTime() <= now) await guarded(() => this.runs.deleteOne({ _id: run._id }));
  }

  /** Progress, which is also the runner's heartbeat. */
  async progress(jobId: string, counts: { selected?: number; processed: number }): Promise<void> {
    await this.setProgress(jobId, counts);
  }

  override finish(
    jobId: string,
    status: RunEnd,
    outcome: { result?: BacktestResult; error?: BacktestFailure; processed?: number } = {},
  ): Promise<void> {
    return super.finish(jobId, status, outcome);
  }

  /**
   * The ids of the records a job selects, oldest first, at most `limit`, and whether more matched. Read in one query
   * selected by equalities the store serves from its indexes (tenant, filters), without a sort: FerretDB v1 sorts and
   * limits in its own memory over every match, while an unsorted cursor streams. Only `_id` and `sort` come back, and
   * only the `limit` oldest are kept here, so memory stays bounded by the job's limit.
   */
  async select(
    job: Pick<BacktestJobDoc, 'tenantId' | 'selection'>,
    /** Awaited after each batch of SELECT_BATCH ids read: the caller paces the scan (the cursor waits with it). */
    pace: () => Promise<void> = () => Promise.resolve(),
  ): Promise<{ ids: string[]; truncated: boolean }> {
    const { selection } = job;
    const filter: Filter<RecordState> = { tenantId: job.tenantId, deleted: false };
    if (selection.clientId !== undefined) filter.clientId = selection.clientId;
    if (selection.entity !== undefined) filter.entity = selection.entity;
    if (selection.status !== undefined) filter.status = selection.status;
    if (selection.user !== undefined) filter.userId = selection.user;
    // A range: applied by FerretDB over the equality's matches as they stream, by MongoDB through `tenant_sort`.
    const bounds = sortBounds(selection.createdAfter, selection.createdBefore);
    if (Object.keys(bounds).length > 0) filter.sort = bounds;
    const limit = selection.limit;
    let kept: Array<{ _id: string; sort: string }> = [];
    let matched = 0;
    const trim = () => {
      kept.sort((a, b) => (a.sort < b.sort ? -1 : a.sort > b.sort ? 1 : 0));
      kept = kept.slice(0, limit);
    };
    await guarded(async () => {
      const cursor = this.records.find(filter, { projection: { _id: 1, sort: 1 }, batchSize: SELECT_BATCH });
      for await (const doc of cursor) {
        matched += 1;
        kept.push({ _id: doc._id, sort: doc.sort });
        if (kept.length >= 2 * limit) trim();
        if (matched % SELECT_BATCH === 0) await pace();
      }
    });
    trim();
    return { ids: kept.map((doc) => doc._id), truncated: matched > limit };
  }

  /** A record by `_id` (an index equality on FerretDB), within the tenant. */
  async record(tenantId: string, recordId: string): Promise<RecordState | null> {
    const found = await guarded(() => this.records.findOne({ _id: recordId }));
    return found && found.tenantId === tenantId ? found : null;
  }

  /** Users as stored now with their flagged counts: two reads by `_id` each (FerretDB answers `$in` with a scan). */
  async usersNow(tenantId: string, userIds: Iterable<string>): Promise<UserNow[]> {
    const ids = [...userIds];
    const out: UserNow[] = [];
    // A few at a time: this runs once per job, after its records.
    for (let at = 0; at < ids.length; at += 8) {
      const found = await guarded(() =>
        Promise.all(
          ids.slice(at, at + 8).map(async (userId) => {
            const [user, counted] = await Promise.all([
              this.users.findOne({ _id: userId }, { projection: { tenantId: 1, status: 1, manual: 1, protected: 1 } }),
              this.flaggedCounts.findOne({ _id: userId }),
            ]);
            if (!user || user.tenantId !== tenantId) return undefined;
            return {
              userId,
              flaggedCount: counted?.count ?? 0,
              status: user.status,
              manual: user.manual,
              protected: user.protected,
            };
          }),
        ),
      );
      for (const user of found) if (user) out.push(user);
    }
    return out;
  }
}
