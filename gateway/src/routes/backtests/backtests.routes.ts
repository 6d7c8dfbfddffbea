import type { ApiRouter } from '../../http/api-router';
import { requestIdOf } from '../../http/request-id';
import { body } from '../../http/validate';
import { createBacktest } from '../../use-cases/create-backtest';
import { actorOf, principalOf, type RouteDeps } from '../deps';
import { batchJobRoutes } from '../shared/batch-job-routes';
import { backtestView } from '../shared/presenters';
import { BacktestData, BacktestList, CreateBacktestBody } from './backtests.schema';

/** Backtests: a rule set version run over stored records without acting, as a job (create, read, cancel). */
export function backtestRoutes(api: ApiRouter, deps: RouteDeps): void {
  api.route(
    {
      method: 'post',
      path: '/backtests',
      tag: 'backtests',
      summary:
        'Run a rule set version over stored records without acting (asynchronous job). 422 unknown_rule_version, ' +
        'invalid_rule_set or backtest_too_large; 409 backtest_running when the tenant’s running backtests are at their ' +
        'bound; 429 rate_limited past the backtests a tenant may create per hour.',
      body: CreateBacktestBody,
      status: 202,
      response: BacktestData,
    },
    async (ctx) => {
      const input = body(ctx, CreateBacktestBody);
      const state = await createBacktest(
        deps,
        { tenantId: principalOf(ctx).tenantId, author: actorOf(ctx), requestId: requestIdOf(ctx) },
        input,
      );
      ctx.status = 202;
      ctx.body = { data: backtestView(state) };
    },
  );

  batchJobRoutes(api, deps, {
    kind: 'backtests',
    tag: 'backtests',
    summaries: {
      list: 'The tenant’s backtests kept now (within their time to live), newest first, at most 50, without results.',
      get: 'A backtest: status, progress and, once succeeded, its result.',
      cancel: 'Cancel a backtest: it stops at its next batch of records (one that ended stays as it ended).',
    },
    data: BacktestData,
    list: BacktestList,
    view: (state) => backtestView(state),
    listView: (state) => {
      const { result: _result, ...view } = backtestView(state, false);
      void _result;
      return view;
    },
  });
}
