import { ulid, type RetroactionJobDoc, type StartRetroaction } from '@vigil/proto';
import {
  BacktestExpiredError,
  BacktestNotFinishedError,
  NotFoundError,
  RetroactionRunningError,
  VersionNotLiveError,
} from '../errors';
import type { RetroactionState } from '../store/retroaction-store';
import type { UseCaseDeps } from './deps';
import { handOverJob, jobCommand } from './hand-over-job';

/**
 * Applies a backtest's version to the records it selected (docs/rules-safely.md, "Apply"): the backtest's id is the
 * confirmation of its predicted effect. Refused unless the backtest succeeded, is kept, judged the live version, and
 * no other retroaction of the tenant runs. Stores the job with the prediction and hands it to the moderators on the
 * `backtests` topic. Used by the API and the console.
 */
export async function applyBacktest(
  deps: UseCaseDeps,
  ctx: { tenantId: string; author: string },
  backtestId: string,
): Promise<RetroactionState> {
  const found = await deps.backtests.find(ctx.tenantId, backtestId);
  if (!found) throw new NotFoundError('backtest not found');
  if (found.expired)
    throw new BacktestExpiredError('the backtest expired: run it again to see what applying it would change', {
      expiredAt: found.job.expiresAt.toISOString(),
    });
  const result = found.run?.result;
  if (found.status !== 'succeeded' || !result)
    throw new BacktestNotFinishedError('only a backtest that succeeded can be applied', { status: found.status });
  const live = await deps.configStore.getRules(ctx.tenantId);
  if (live.version !== found.job.version)
    throw new VersionNotLiveError('the backtest’s version is not the live one: promote it first', {
      version: found.job.version,
      live: live.version,
    });
  const now = new Date();
  const job: RetroactionJobDoc = {
    _id: `ra_${ulid()}`,
    tenantId: ctx.tenantId,
    backtestId,
    version: found.job.version,
    selection: found.job.selection,
    ai: result.ai.enabled && result.ai.recordsWithoutAi === 0,
    predicted: { judged: result.judged, truncated: result.truncated, changes: result.changes, users: result.users },
    author: ctx.author,
    createdAt: now,
  };
  if (!(await deps.retroactions.create(job))) {
    throw new RetroactionRunningError('another retroaction of the tenant has not ended: cancel it or wait', {});
  }
  const command: StartRetroaction = {
    type: 'StartRetroaction',
    ...jobCommand(job, now),
    configVersion: deps.versions.of(ctx.tenantId),
  };
  await handOverJob(deps, command, deps.retroactions, job);
  return { job, run: null, status: 'queued' };
}
