import type { ApiRouter } from '../../http/api-router';
import { body, query } from '../../http/validate';
import { idParam } from '../../http/params';
import { decide } from '../../use-cases/decide';
import { deciderOf, callModerator, type RouteDeps } from '../deps';
import { AppealData, AppealDecisionBody, AppealList, ListAppealsQuery } from './appeals.schema';
import { toAppealView } from '../shared/presenters';

export function appealRoutes(api: ApiRouter, deps: RouteDeps): void {
  api.route(
    {
      method: 'get',
      path: '/appeals',
      tag: 'appeals',
      summary: 'List appeals with cursor pagination and filters.',
      query: ListAppealsQuery,
      status: 200,
      response: AppealList,
    },
    async (ctx) => {
      const q = query(ctx, ListAppealsQuery);
      const result = await callModerator(deps, ctx, 'listAppeals', {
        limit: q.limit,
        startingAfter: q.starting_after,
        status: q.status,
        userId: q.user,
      });
      ctx.body = { data: result.appeals.map(toAppealView), has_more: result.hasMore };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/appeals/:id/decision',
      tag: 'appeals',
      summary: 'Approve (reinstates the user) or reject an open appeal.',
      body: AppealDecisionBody,
      status: 200,
      response: AppealData,
    },
    async (ctx) => {
      const input = body(ctx, AppealDecisionBody);
      const appeal = await decide(deps, deciderOf(ctx), 'decideAppeal', idParam(ctx), {
        decision: input.decision,
        reason: input.reason,
      });
      ctx.body = { data: toAppealView(appeal) };
    },
  );
}
