import type { ApiRouter } from '../../http/api-router';
import { idParam } from '../../http/params';
import { applyBacktest } from '../../use-cases/apply-backtest';
import { actorOf, principalOf, type RouteDeps } from '../deps';
import { batchJobRoutes } from '../shared/batch-job-routes';
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

  batchJobRoutes(api, deps, {
    kind: 'retroactions',
    tag: 'backtests',
    summaries: {
      list: 'The tenant’s retroactions, newest first, at most 50.',
      get: 'A retroaction: status, the predicted effect, progress and what it did so far.',
      cancel:
        'Cancel a retroaction: it stops after its current batch (records already moderated stay so). One that ended ' +
        'stays as it ended.',
    },
    data: RetroactionData,
    list: RetroactionList,
    view: retroactionView,
    listView: retroactionView,
  });
}
