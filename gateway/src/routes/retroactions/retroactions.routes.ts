import { ulid, type RetroactionJobDoc, type StartRetroaction } from '@vigil/proto';
import type { z } from 'zod';
import type { ApiRouter } from '../../http/api-router';
import {
  BacktestExpiredError,
  BacktestNotFinishedError,
  NotFoundError,
  RetroactionRunningError,
  VersionNotLiveError,
} from '../../errors';
import type { RetroactionState } from '../../store/retroaction-store';
import { actorOf, idParam, principalOf, type RouteDeps } from '../deps';
import { handOverJob } from '../backtests/backtests.routes';
import { RetroactionData, RetroactionList, type RetroactionView } from './retroactions.schema';

/**
 * Applies a backtest's version to the records it selected (docs/rules-safely.md, "Apply"): the backtest's id is the
 * confirmation of its predicted effect. Refused unless the backtest succeeded, is kept, judged the live version, and
 * no other retroaction of the tenant runs. Stores the job with the prediction and hands it to the moderators on the
 * `backtests` topic. Used by the API and the console.
 */
export async function applyBacktest(
  deps: RouteDeps,
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
  const id = ulid();
  const command: StartRetroaction = {
    type: 'StartRetroaction',
    id,
    tenantId: ctx.tenantId,
    jobId: job._id,
    issuedAt: now.toISOString(),
    configVersion: deps.versions.of(ctx.tenantId),
  };
  await handOverJob(deps, command, () => deps.retroactions.discard(job));
  return { job, run: null, status: 'queued' };
}

export function retroactionView(state: RetroactionState): z.input<typeof RetroactionView> {
  const { job, run } = state;
  return {
    id: job._id,
    backtestId: job.backtestId,
    version: job.version,
    status: state.status,
    ...(state.error ? { error: state.error } : {}),
    selection: job.selection,
    ai: job.ai,
    predicted: job.predicted,
    progress: { selected: run?.selected ?? null, processed: run?.processed ?? 0 },
    counts: run?.counts ?? { toFlagged: 0, toCompliant: 0, unchanged: 0, heldByHumans: 0, skipped: 0 },
    author: job.author,
    createdAt: job.createdAt.toISOString(),
    startedAt: run?.startedAt.toISOString() ?? null,
    finishedAt: run?.finishedAt?.toISOString() ?? null,
  };
}

/** A retroaction of the caller's tenant named by the `:id` path parameter. */
export async function retroactionOf(deps: RouteDeps, tenantId: string, id: string): Promise<RetroactionState> {
  const state = await deps.retroactions.get(tenantId, id);
  if (!state) throw new NotFoundError('retroaction not found');
  return state;
}

/** Retroactions: a promoted version applied to past records, from a backtest's selection (apply, read, cancel). */
export function retroactionRoutes(api: ApiRouter, deps: RouteDeps): void {
  api.route(
    {
      method: 'post',
      path: '/backtests/:id/apply',
      tag: 'backtests',
      summary:
        'Apply the backtest’s version, now live, to the records it selected (asynchronous job, answered with the ' +
        'predicted effect). 404 not_found; 410 backtest_expired; 409 backtest_not_finished, version_not_live ' +
        '(promote it first) or retroaction_running (one per tenant at once).',
      status: 202,
      response: RetroactionData,
    },
    async (ctx) => {
      const { tenantId } = principalOf(ctx);
      const state = await applyBacktest(deps, { tenantId, author: actorOf(ctx) }, idParam(ctx));
      ctx.status = 202;
      ctx.body = { data: retroactionView(state) };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/retroactions',
      tag: 'backtests',
      summary: 'The tenant’s retroactions, newest first, at most 50.',
      status: 200,
      response: RetroactionList,
    },
    async (ctx) => {
      const states = await deps.retroactions.list(principalOf(ctx).tenantId);
      ctx.body = { data: states.map(retroactionView), has_more: false };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/retroactions/:id',
      tag: 'backtests',
      summary: 'A retroaction: status, the predicted effect, progress and what it did so far.',
      status: 200,
      response: RetroactionData,
    },
    async (ctx) => {
      ctx.body = { data: retroactionView(await retroactionOf(deps, principalOf(ctx).tenantId, idParam(ctx))) };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/retroactions/:id/cancel',
      tag: 'backtests',
      summary:
        'Cancel a retroaction: it stops after its current batch (records already moderated stay so). One that ended ' +
        'stays as it ended.',
      status: 202,
      response: RetroactionData,
    },
    async (ctx) => {
      const state = await retroactionOf(deps, principalOf(ctx).tenantId, idParam(ctx));
      ctx.status = 202;
      ctx.body = { data: retroactionView(await deps.retroactions.cancel(state)) };
    },
  );
}
