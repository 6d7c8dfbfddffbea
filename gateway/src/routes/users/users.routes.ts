import type { ApiRouter } from '../../http/api-router';
import type { RpcResponse } from '../../grpc/moderator-client';
import { body, query } from '../../http/validate';
import { ValidationError } from '../../errors';
import { UnknownLogCursor, type LogCursor } from '../../store/user-log';
import { AppealData } from '../appeals/appeals.schema';
import { requestIdOf } from '../../http/request-id';
import { idParam } from '../../http/params';
import { decide } from '../../use-cases/decide';
import { fileAppeal } from '../../use-cases/file-appeal';
import { callerOf, deciderOf, callModerator, principalOf, type RouteDeps } from '../deps';
import { listRoute } from '../shared/list-route';
import { toAppealView, toPaymentActionView, toUserView } from '../shared/presenters';
import {
  CreateAppealBody,
  EmailLogQuery,
  EmailMessageList,
  ListUsersQuery,
  PaymentActionList,
  PaymentActionLogQuery,
  UserData,
  UserList,
  UserStatusBody,
} from './users.schema';

/** A user's log page from the query's cursor; a cursor that is no entry of that user's log is a 400 naming it. */
async function logPage<T>(
  q: { starting_after?: string; ending_before?: string },
  read: (cursor: LogCursor) => Promise<T>,
): Promise<T> {
  try {
    return await read({
      startingAfter: q.starting_after,
      endingBefore: q.starting_after ? undefined : q.ending_before,
    });
  } catch (err) {
    if (!(err instanceof UnknownLogCursor)) throw err;
    throw new ValidationError(err.message, [{ path: [err.parameter], message: "not an entry of this user's log" }]);
  }
}

export function userRoutes(api: ApiRouter, deps: RouteDeps): void {
  const view = (ctx: Parameters<typeof principalOf>[0], user: RpcResponse<'getUser'>) =>
    toUserView(user, deps.appealLinks.urlFor(principalOf(ctx).tenantId, user));

  listRoute(
    api,
    {
      path: '/users',
      tag: 'users',
      summary: 'List users, oldest first, with cursor pagination and filters.',
      query: ListUsersQuery,
      response: UserList,
    },
    async (ctx, q, page) => {
      const result = await callModerator(deps, ctx, 'listUsers', {
        ...page,
        endingBefore: page.startingAfter ? undefined : q.ending_before,
        clientId: q.clientId,
        email: q.email,
        status: q.status,
      });
      return { data: result.users.map((user) => view(ctx, user)), hasMore: result.hasMore };
    },
  );

  api.route(
    { method: 'get', path: '/users/:id', tag: 'users', summary: 'Get a user.', status: 200, response: UserData },
    async (ctx) => {
      const user = await callModerator(deps, ctx, 'getUser', { userId: idParam(ctx) });
      ctx.body = { data: view(ctx, user) };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/users/:id/status',
      tag: 'users',
      summary: 'Suspend, ban or reinstate a user by hand (sticky; refused with 403 for a protected user).',
      body: UserStatusBody,
      status: 200,
      response: UserData,
    },
    async (ctx) => {
      const input = body(ctx, UserStatusBody);
      const user = await decide(deps, deciderOf(ctx), 'setUserStatus', idParam(ctx), {
        status: input.status,
        reason: input.reason,
        policy: input.policy ?? '',
      });
      ctx.body = { data: view(ctx, user) };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/users/:id/appeals',
      tag: 'appeals',
      summary: 'File an appeal for a suspended or banned user, once per decision (409 otherwise, as the appeal page).',
      body: CreateAppealBody,
      status: 201,
      response: AppealData,
    },
    async (ctx) => {
      const input = body(ctx, CreateAppealBody);
      const appeal = await fileAppeal(deps, callerOf(ctx), idParam(ctx), input.text);
      ctx.status = 201;
      ctx.body = { data: toAppealView(appeal) };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/users/:id/emails',
      tag: 'users',
      summary:
        'Emails sent (or due, or skipped) to the user on status changes, newest first (`starting_after` pages to older ' +
        'ones, `ending_before` to newer); no addresses or bodies.',
      query: EmailLogQuery,
      status: 200,
      response: EmailMessageList,
    },
    async (ctx) => {
      const q = query(ctx, EmailLogQuery);
      const tenantId = principalOf(ctx).tenantId;
      // Another tenant's user is 404, as everywhere.
      const user = await deps.moderator.call(
        'getUser',
        { tenantId, userId: idParam(ctx) },
        { requestId: requestIdOf(ctx) },
      );
      const page = await logPage(q, (cursor) => deps.emailLog.list(tenantId, user.id, q.limit, cursor));
      ctx.body = {
        data: page.docs.map((doc) => ({
          id: doc._id,
          kind: doc.kind,
          status: doc.state,
          skipReason: doc.skipReason ?? null,
          attemptCount: doc.attemptCount,
          lastError: doc.lastError ?? null,
          sentAt: doc.sentAt?.toISOString() ?? null,
          createdAt: doc.createdAt.toISOString(),
          updatedAt: doc.updatedAt.toISOString(),
        })),
        has_more: page.hasMore,
      };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/users/:id/payment-actions',
      tag: 'users',
      summary:
        "Payment actions (pause, resume) on the user's Stripe connected account, newest first (`starting_after` pages " +
        'to older ones, `ending_before` to newer), with every attempt.',
      query: PaymentActionLogQuery,
      status: 200,
      response: PaymentActionList,
    },
    async (ctx) => {
      const q = query(ctx, PaymentActionLogQuery);
      const tenantId = principalOf(ctx).tenantId;
      // Another tenant's user is 404, as everywhere.
      const user = await deps.moderator.call(
        'getUser',
        { tenantId, userId: idParam(ctx) },
        { requestId: requestIdOf(ctx) },
      );
      const page = await logPage(q, (cursor) => deps.paymentLog.list(tenantId, user.id, q.limit, cursor));
      ctx.body = { data: page.docs.map(toPaymentActionView), has_more: page.hasMore };
    },
  );
}
