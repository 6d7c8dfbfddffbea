import { NotFoundError } from '../errors';
import type { Context } from 'koa';
import type { TenantVersions, Topics } from '@vigil/proto';
import type { AppealLinks } from '../appeal/appeal-token';
import type { Principal } from '../auth/api-key-auth';
import type { Methods, ModeratorClient, RpcRequest, RpcResponse } from '../grpc/moderator-client';
import { requestIdOf } from '../http/request-id';
import type { OutgoingCommand } from '../kafka/command-producer';
import type { KeyLimiter } from '../http/rate-limit';
import type { BacktestStore } from '../store/backtest-store';
import type { RetroactionStore } from '../store/retroaction-store';
import type { ConfigStore } from '../store/config-store';
import type { BacktestSettings } from './backtests/backtests.routes';
import type { ConfigVersionStore } from '../store/config-version-store';
import type { EmailLogStore } from '../store/email-log-store';
import type { PaymentActionLogStore } from '../store/payment-action-log-store';
import type { PaymentKeyStore } from '../store/payment-key-store';
import type { RulePrecisionStore } from '../store/rule-precision-store';
import type { TdbStore } from '../store/tdb-store';
import type { TransparencyCountStore } from '../store/transparency-count-store';
import type { WebhookStore } from '../store/webhook-store';
import type { EndpointUrlGuard } from './webhook-endpoints/endpoint-url';

/** What route modules need; built by `createApp`. */
export interface RouteDeps {
  moderator: ModeratorClient;
  commands: { send(command: OutgoingCommand): Promise<void> };
  topics: Topics;
  /** The tenants' configuration versions known here: stamped on every command. */
  versions: TenantVersions;
  /** The tenants' stored configuration versions (raised by every change; read by the console's session). */
  configVersions: ConfigVersionStore;
  configStore: ConfigStore;
  webhooks: WebhookStore;
  endpointUrls: EndpointUrlGuard;
  /** Webhook endpoints per tenant at most. */
  maxEndpointsPerTenant: number;
  /** Whether rule sets may use `prompt` strategies (the moderator has an LLM). */
  promptRulesEnabled: boolean;
  appealLinks: AppealLinks;
  emailLog: EmailLogStore;
  paymentKeys: PaymentKeyStore;
  paymentLog: PaymentActionLogStore;
  /** Backtest jobs and their runs. */
  backtests: BacktestStore;
  backtestSettings: BacktestSettings;
  /** Retroaction jobs (a promoted version applied from a backtest's selection) and their runs. */
  retroactions: RetroactionStore;
  /** Transparency Database settings (token sealed) and the submission log. */
  tdb: TdbStore;
  /** Request counts shared with the other gateway replicas (the API key, console sign-in and appeal page limits). */
  rateLimiter: KeyLimiter;
  /** Each rule's flags and human reviews (written by the moderator). */
  rulePrecision: RulePrecisionStore;
  /** The transparency report's counters (written by the moderator). */
  transparencyCounts: TransparencyCountStore;
}

export const principalOf = (ctx: Context): Principal => ctx.state.principal as Principal;
/** How a human decision names who made it: the API key, never a person's name. */
export const actorOf = (ctx: Context): string => `api_key:${principalOf(ctx).keyId}`;
/**
 * The `:id` path parameter (set by the router on every route that declares it). Every id Vigil issues is letters,
 * digits, `_` and `-`; anything else names nothing (and a NUL could not even be looked up), so it is a 404.
 */
export const idParam = (ctx: Context): string => {
  const id = String((ctx.params as Record<string, string>).id ?? '');
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(id)) throw new NotFoundError('not found');
  return id;
};

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
