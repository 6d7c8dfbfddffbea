import type { Context } from 'koa';
import type { Principal } from '../auth/api-key-auth';
import type { Methods, RpcRequest, RpcResponse } from '../grpc/moderator-client';
import { requestIdOf } from '../http/request-id';
import type { Decider } from '../use-cases/decide';
import type { Caller, UseCaseDeps } from '../use-cases/deps';

/** What route modules need: the use cases' parts; built by `createApp`. */
export type RouteDeps = UseCaseDeps;

export const principalOf = (ctx: Context): Principal => ctx.state.principal as Principal;
/** How a human decision names who made it: the API key, never a person's name. */
export const actorOf = (ctx: Context): string => `api_key:${principalOf(ctx).keyId}`;

/** Calls the moderator for the caller's tenant, under the request's id. */
export function callModerator<K extends Methods>(
  deps: Pick<RouteDeps, 'moderator'>,
  ctx: Context,
  method: K,
  request: Omit<RpcRequest<K>, 'tenantId'>,
): Promise<RpcResponse<K>> {
  const tenantId = principalOf(ctx).tenantId;
  return deps.moderator.call(method, { ...request, tenantId }, { requestId: requestIdOf(ctx) });
}

/** The caller as a use case names it: the key's tenant and the request. */
export const callerOf = (ctx: Context): Caller => ({
  tenantId: principalOf(ctx).tenantId,
  requestId: requestIdOf(ctx),
});

/** The caller as a decision names it: the tenant, the request, and the API key that decides. */
export const deciderOf = (ctx: Context): Decider => ({
  tenantId: principalOf(ctx).tenantId,
  requestId: requestIdOf(ctx),
  actor: actorOf(ctx),
});
