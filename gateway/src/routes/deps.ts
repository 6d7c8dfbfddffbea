import type { Context } from 'koa';
import type { Principal } from '../auth/api-key-auth';
import type { Methods, RpcRequest, RpcResponse } from '../grpc/moderator-client';
import { idParam } from '../http/params';
import { requestIdOf } from '../http/request-id';
import type { UseCaseDeps } from '../use-cases/deps';

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

/** The field of each decision's request that names what the `:id` path parameter names. */
const DECIDED = {
  moderateRecordManually: 'recordId',
  setUserStatus: 'userId',
  decideAppeal: 'appealId',
  decideReport: 'reportId',
  decideReportComplaint: 'reportId',
} as const;
type Decision = keyof typeof DECIDED;

/** A human decision on the record, user, appeal or report of the `:id` path parameter, made by the caller's API key. */
export function decide<K extends Decision>(
  deps: Pick<RouteDeps, 'moderator'>,
  ctx: Context,
  method: K,
  decision: Omit<RpcRequest<K>, 'tenantId' | 'actor' | (typeof DECIDED)[K]>,
): Promise<RpcResponse<K>> {
  const request = { ...decision, [DECIDED[method]]: idParam(ctx), actor: actorOf(ctx) };
  return callModerator(deps, ctx, method, request as Omit<RpcRequest<K>, 'tenantId'>);
}
