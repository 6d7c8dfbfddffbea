import type { ApiRouter } from '../../http/api-router';
import { body } from '../../http/validate';
import { idParam } from '../../http/params';
import { decide } from '../../use-cases/decide';
import { deciderOf, callModerator, type RouteDeps } from '../deps';
import { AppealData, AppealDecisionBody, AppealList, ListAppealsQuery } from './appeals.schema';
import { listRoute } from '../shared/list-route';
import { toAppealView } from '../shared/presenters';

export function appealRoutes(api: ApiRouter, deps: RouteDeps): void {
  listRoute(
    api,
    {
      path: '/appeals',
      tag: 'appeals',
      summary: 'List appeals with cursor pagination and filters.',
      query: ListAppealsQuery,
      response: AppealList,
    },
    async (ctx, q, page) => {
      const result = await callModerator(deps, ctx, 'listAppeals', { ...page, status: q.status, userId: q.user });
      return { data: result.appeals.map(toAppealView), hasMore: result.hasMore };
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
