import type { ApiRouter } from '../../http/api-router';
import { idParam } from '../../http/params';
import { applyBacktest } from '../../use-cases/apply-backtest';
import { cancelRetroaction } from '../../use-cases/cancel-retroaction';
import { retroactionOf } from '../../use-cases/get-retroaction';
import { actorOf, principalOf, type RouteDeps } from '../deps';
import { retroactionView } from '../shared/presenters';
import { RetroactionData, RetroactionList } from './retroactions.schema';

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
      const state = await cancelRetroaction(deps, principalOf(ctx).tenantId, idParam(ctx));
      ctx.status = 202;
      ctx.body = { data: retroactionView(state) };
    },
  );
}
