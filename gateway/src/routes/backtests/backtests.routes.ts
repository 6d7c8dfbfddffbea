import type { ApiRouter } from '../../http/api-router';
import { idParam } from '../../http/params';
import { requestIdOf } from '../../http/request-id';
import { body } from '../../http/validate';
import { cancelBacktest } from '../../use-cases/cancel-backtest';
import { createBacktest } from '../../use-cases/create-backtest';
import { backtestOf } from '../../use-cases/get-backtest';
import { actorOf, principalOf, type RouteDeps } from '../deps';
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

  api.route(
    {
      method: 'get',
      path: '/backtests',
      tag: 'backtests',
      summary:
        'The tenant’s backtests kept now (within their time to live), newest first, at most 50, without results.',
      status: 200,
      response: BacktestList,
    },
    async (ctx) => {
      const states = await deps.backtests.list(principalOf(ctx).tenantId);
      ctx.body = {
        data: states.map((state) => {
          const { result: _result, ...view } = backtestView(state, false);
          void _result;
          return view;
        }),
        has_more: false,
      };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/backtests/:id',
      tag: 'backtests',
      summary: 'A backtest: status, progress and, once succeeded, its result.',
      status: 200,
      response: BacktestData,
    },
    async (ctx) => {
      ctx.body = { data: backtestView(await backtestOf(deps, principalOf(ctx).tenantId, idParam(ctx))) };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/backtests/:id/cancel',
      tag: 'backtests',
      summary: 'Cancel a backtest: it stops at its next batch of records (one that ended stays as it ended).',
      status: 202,
      response: BacktestData,
    },
    async (ctx) => {
      const state = await cancelBacktest(deps, principalOf(ctx).tenantId, idParam(ctx));
      ctx.status = 202;
      ctx.body = { data: backtestView(state) };
    },
  );
}
