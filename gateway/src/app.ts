import Koa from 'koa';
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { SecretBox, type TenantVersions, type Topics } from '@vigil/proto';
import { AppealLinks, AppealTokens } from './appeal/appeal-token';
import { appealPageRoutes } from './appeal/appeal-page.routes';
import { requireApiKey, type ApiKeyAuthenticator } from './auth/api-key-auth';
import type { Config } from './config';
import { consoleRoutes } from './console/console.routes';
import type { ModeratorClient } from './grpc/moderator-client';
import { ApiRouter } from './http/api-router';
import { errorHandler } from './http/error-handler';
import { MethodNotAllowedError } from './errors';
import { httpMetrics } from './http/metrics';
import { apiKeyRateLimit, type KeyLimiter } from './http/rate-limit';
import { requestId } from './http/request-id';
import { closeOnUnreadBody } from './http/unread-body';
import type { OutgoingCommand } from './kafka/command-producer';
import { appealRoutes } from './routes/appeals/appeals.routes';
import { hashBankRoutes } from './routes/hash-banks/hash-banks.routes';
import { reportRoutes } from './routes/reports/reports.routes';
import type { RouteDeps } from './routes/deps';
import { ingestRoutes } from './routes/ingest/ingest.routes';
import { moderateRoutes } from './routes/moderate/moderate.routes';
import { buildOpenApi } from './routes/openapi/openapi';
import { recordRoutes } from './routes/records/records.routes';
import { policyRoutes } from './routes/policies/policies.routes';
import { statementRoutes } from './routes/statements/statements.routes';
import { ruleRoutes } from './routes/rules/rules.routes';
import { backtestRoutes, type BacktestSettings } from './routes/backtests/backtests.routes';
import { BacktestStore } from './store/backtest-store';
import { RetroactionStore } from './store/retroaction-store';
import { retroactionRoutes } from './routes/retroactions/retroactions.routes';
import { shadowVersionRoutes } from './routes/rules/shadow-version.routes';
import { userRoutes } from './routes/users/users.routes';
import { webhookEndpointRoutes } from './routes/webhook-endpoints/webhook-endpoints.routes';
import { ConfigStore } from './store/config-store';
import { ConfigVersionStore } from './store/config-version-store';
import { RuleVersionStore } from './store/rule-version-store';
import { RulePrecisionStore } from './store/rule-precision-store';
import { TransparencyCountStore } from './store/transparency-count-store';
import { precisionRoutes } from './routes/precision/precision.routes';
import { transparencyReportRoutes } from './routes/transparency-report/transparency-report.routes';
import { endpointUrlGuard, type ResolveHost } from './routes/webhook-endpoints/endpoint-url';
import { MemberStore } from './store/member-store';
import { EmailLogStore } from './store/email-log-store';
import { PaymentActionLogStore } from './store/payment-action-log-store';
import { PaymentKeyStore } from './store/payment-key-store';
import { TdbStore } from './store/tdb-store';
import { transparencyRoutes } from './routes/transparency/transparency.routes';
import { WebhookStore } from './store/webhook-store';

export const API_PREFIX = '/api/v1';

export interface AppDeps {
  log: Logger;
  /** Where request metrics go; none when absent. */
  registry?: Registry;
  db: Db;
  authenticator: ApiKeyAuthenticator;
  /**
   * The tenants' configuration versions this process knows (the authenticator reads them, this app's changes raise
   * them); stamped on commands and moderator calls.
   */
  versions: TenantVersions;
  moderator: ModeratorClient;
  commands: { send(command: OutgoingCommand): Promise<void> };
  topics: Topics;
  /** How webhook hosts are resolved at registration; the system resolver when absent (tests pass their own). */
  resolveHost?: ResolveHost;
  /** Decides the per-key rate limit (a `SharedRateLimiter`, started by the caller). */
  rateLimiter: KeyLimiter;
  settings: AppSettings;
}

/** The gateway's settings, each from its variable in `config.ts` (where the defaults are). */
export interface AppSettings {
  bodyLimitBytes: number;
  /** Default per-key limit (`RATE_LIMIT_POINTS` per `RATE_LIMIT_WINDOW_S`); a tenant's own limit replaces it. */
  rateLimitPoints: number;
  rateLimitWindowSeconds: number;
  trustProxy: boolean;
  /** `WEBHOOK_ALLOWED_CIDRS`. */
  webhookAllowedCidrs: readonly string[];
  webhookMaxEndpointsPerTenant: number;
  /** `PROMPT_RULES_ENABLED`: the moderator has an LLM to judge prompt strategies. */
  promptRulesEnabled: boolean;
  /** `BACKTEST_*`: bounds of backtests. */
  backtests: BacktestSettings;
  /** `PUBLIC_URL`: base of the links handed to end users. */
  publicUrl: string;
  /** `APPEAL_TOKEN_SECRET`; appeal links and the appeal page are off without it. */
  appealTokenSecret: string | undefined;
  appealTokenTtlSeconds: number;
  /** `SECRETS_ENCRYPTION_KEY`: seals tenants' payments keys; storing one is refused without it. */
  secretsEncryptionKey: readonly Buffer[] | undefined;
  appealPagePerMinute: number;
  consoleSessionTtlSeconds: number;
  consoleLockoutAttempts: number;
  consoleLockoutSeconds: number;
  consoleSignInPerMinute: number;
}

export function appSettings(config: Config): AppSettings {
  return {
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
    rateLimitPoints: config.RATE_LIMIT_POINTS,
    rateLimitWindowSeconds: config.RATE_LIMIT_WINDOW_S,
    trustProxy: config.TRUST_PROXY,
    webhookAllowedCidrs: config.WEBHOOK_ALLOWED_CIDRS,
    webhookMaxEndpointsPerTenant: config.WEBHOOK_MAX_ENDPOINTS_PER_TENANT,
    promptRulesEnabled: config.PROMPT_RULES_ENABLED,
    backtests: {
      maxRunning: config.BACKTEST_MAX_RUNNING,
      maxPerHour: config.BACKTEST_MAX_PER_HOUR,
      maxRecords: config.BACKTEST_MAX_RECORDS,
      maxAiCalls: config.BACKTEST_MAX_AI_CALLS,
      ttlSeconds: config.BACKTEST_RESULT_TTL_S,
    },
    publicUrl: config.PUBLIC_URL,
    appealTokenSecret: config.APPEAL_TOKEN_SECRET,
    secretsEncryptionKey: config.SECRETS_ENCRYPTION_KEY,
    appealTokenTtlSeconds: config.APPEAL_TOKEN_TTL_S,
    appealPagePerMinute: config.APPEAL_PAGE_PER_MINUTE,
    consoleSessionTtlSeconds: config.CONSOLE_SESSION_TTL_S,
    consoleLockoutAttempts: config.CONSOLE_LOCKOUT_ATTEMPTS,
    consoleLockoutSeconds: config.CONSOLE_LOCKOUT_S,
    consoleSignInPerMinute: config.CONSOLE_SIGN_IN_PER_MINUTE,
  };
}

const API_PATH = /^\/+api\/+v1(\/|$)/i;

/**
 * Whether a request path is below the API prefix, read generously: any case, repeated slashes, percent-encoding. The
 * router only routes the exact prefix (it is case-sensitive and strict), so everything it could route is
 * authenticated, and near misses are refused with 401 rather than reaching the 404 handler with a body read.
 */
export function isApiPath(path: string): boolean {
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // A malformed escape routes nowhere; the raw path still decides.
  }
  return API_PATH.test(path) || API_PATH.test(decoded);
}

/** Builds the HTTP API. No I/O here: every client comes in through `deps`. */
export function createApp(deps: AppDeps): Koa {
  const app = new Koa({ proxy: deps.settings.trustProxy });
  app.silent = true;
  app.on('error', (err: unknown) => deps.log.error({ err }, 'unhandled http error'));

  const { settings } = deps;
  const appealTokens = settings.appealTokenSecret
    ? new AppealTokens(settings.appealTokenSecret, settings.appealTokenTtlSeconds)
    : undefined;
  const complaintTokens = settings.appealTokenSecret
    ? new AppealTokens(settings.appealTokenSecret, settings.appealTokenTtlSeconds, Date.now, 'complaint')
    : undefined;
  const configVersions = new ConfigVersionStore(deps.db, deps.versions, deps.authenticator.ttlMs);
  const ruleVersions = new RuleVersionStore(deps.db);
  const routeDeps: RouteDeps = {
    moderator: deps.moderator,
    commands: deps.commands,
    topics: deps.topics,
    versions: deps.versions,
    configVersions,
    configStore: new ConfigStore(deps.db, configVersions, deps.versions, ruleVersions),
    webhooks: new WebhookStore(deps.db, configVersions),
    endpointUrls: endpointUrlGuard({
      allowedCidrs: deps.settings.webhookAllowedCidrs,
      ...(deps.resolveHost ? { resolve: deps.resolveHost } : {}),
    }),
    maxEndpointsPerTenant: deps.settings.webhookMaxEndpointsPerTenant,
    promptRulesEnabled: deps.settings.promptRulesEnabled,
    appealLinks: new AppealLinks(appealTokens, settings.publicUrl, complaintTokens),
    emailLog: new EmailLogStore(deps.db),
    paymentKeys: new PaymentKeyStore(
      deps.db,
      settings.secretsEncryptionKey?.length ? new SecretBox(settings.secretsEncryptionKey) : undefined,
    ),
    paymentLog: new PaymentActionLogStore(deps.db),
    tdb: new TdbStore(
      deps.db,
      settings.secretsEncryptionKey?.length ? new SecretBox(settings.secretsEncryptionKey) : undefined,
    ),
    rateLimiter: deps.rateLimiter,
    backtests: new BacktestStore(deps.db),
    backtestSettings: settings.backtests,
    retroactions: new RetroactionStore(deps.db),
    rulePrecision: new RulePrecisionStore(deps.db, ruleVersions),
    transparencyCounts: new TransparencyCountStore(deps.db),
  };
  const consoleRouter = consoleRoutes(
    { ...routeDeps, members: new MemberStore(deps.db), log: deps.log },
    {
      sessionTtlSeconds: settings.consoleSessionTtlSeconds,
      lockoutAttempts: settings.consoleLockoutAttempts,
      lockoutSeconds: settings.consoleLockoutSeconds,
      signInPerMinute: settings.consoleSignInPerMinute,
      bodyLimitBytes: settings.bodyLimitBytes,
      publicUrl: settings.publicUrl,
    },
  );
  const appealPage = appealPageRoutes({ ...routeDeps, log: deps.log }, appealTokens, complaintTokens, {
    perMinute: settings.appealPagePerMinute,
    bodyLimitBytes: 16 * 1024,
    publicUrl: settings.publicUrl,
  });
  const api = new ApiRouter(API_PREFIX, deps.settings.bodyLimitBytes);
  moderateRoutes(api, routeDeps);
  ingestRoutes(api, routeDeps);
  recordRoutes(api, routeDeps);
  userRoutes(api, routeDeps);
  appealRoutes(api, routeDeps);
  reportRoutes(api, routeDeps);
  ruleRoutes(api, routeDeps);
  shadowVersionRoutes(api, routeDeps);
  policyRoutes(api, routeDeps);
  statementRoutes(api, routeDeps);
  backtestRoutes(api, routeDeps);
  retroactionRoutes(api, routeDeps);
  precisionRoutes(api, routeDeps);
  transparencyRoutes(api, routeDeps);
  transparencyReportRoutes(api, routeDeps);
  webhookEndpointRoutes(api, routeDeps);
  hashBankRoutes(api, routeDeps);

  let openApi: string | undefined;
  api.raw(
    {
      method: 'get',
      path: '/openapi.json',
      fullPath: '/openapi.json',
      tag: 'meta',
      summary: 'This document.',
      status: 200,
      authenticated: false,
    },
    (ctx) => {
      // Built on first use: nothing is generated at start-up for a process that never serves it.
      openApi ??= JSON.stringify(buildOpenApi(api.specs, '1.0.0'));
      ctx.type = 'application/json';
      ctx.body = openApi;
      return Promise.resolve();
    },
  );

  const authenticate = requireApiKey(deps.authenticator);
  const limit = apiKeyRateLimit(deps.rateLimiter, {
    requests: deps.settings.rateLimitPoints,
    windowSeconds: deps.settings.rateLimitWindowSeconds,
  });

  app.use(requestId);
  app.use(closeOnUnreadBody);
  if (deps.registry) app.use(httpMetrics(deps.registry));
  app.use(errorHandler(deps.log));
  // Authentication and the rate limit come before routing and body parsing: an unauthenticated request is refused
  // without its body being read, whatever the path below the prefix.
  app.use(async (ctx, next) => {
    if (!isApiPath(ctx.path)) {
      await next();
      return;
    }
    await authenticate(ctx, () => limit(ctx, next));
  });
  app.use(consoleRouter.routes());
  app.use(appealPage.routes());
  app.use(api.router.routes());
  app.use(
    api.router.allowedMethods({
      throw: true,
      methodNotAllowed: () => new MethodNotAllowedError('method not allowed on this route'),
      notImplemented: () => new MethodNotAllowedError('method not implemented'),
    }),
  );
  return app;
}
