import type Router from '@koa/router';
import Koa from 'koa';
import type { FeatureModule } from '@vigil/proto/platform';
import { appealTokensOf, type AppealTokenPair } from './appeal/appeal-token';
import { appealPageRoutes } from './appeal/appeal-page.routes';
import { requireApiKey, type ApiKeyAuthenticator } from './auth/api-key-auth';
import { consoleRoutes } from './console/console.routes';
import { MethodNotAllowedError } from './errors';
import { isApiPath } from './http/api-path';
import { ApiRouter } from './http/api-router';
import { errorHandler } from './http/error-handler';
import { httpMetrics } from './http/metrics';
import { apiKeyRateLimit } from './http/rate-limit';
import { requestId } from './http/request-id';
import { closeOnUnreadBody } from './http/unread-body';
import { appealRoutes } from './routes/appeals/appeals.routes';
import { hashBankRoutes } from './routes/hash-banks/hash-banks.routes';
import { hashFeedRoutes } from './routes/hash-banks/hash-feeds.routes';
import { backtestRoutes } from './routes/backtests/backtests.routes';
import { ingestRoutes } from './routes/ingest/ingest.routes';
import { moderateRoutes } from './routes/moderate/moderate.routes';
import { buildOpenApi } from './routes/openapi/openapi';
import { policyRoutes } from './routes/policies/policies.routes';
import { precisionRoutes } from './routes/precision/precision.routes';
import { recordRoutes } from './routes/records/records.routes';
import { reportRoutes } from './routes/reports/reports.routes';
import { retroactionRoutes } from './routes/retroactions/retroactions.routes';
import { ruleRoutes } from './routes/rules/rules.routes';
import { shadowVersionRoutes } from './routes/rules/shadow-version.routes';
import { statementRoutes } from './routes/statements/statements.routes';
import { transparencyReportRoutes } from './routes/transparency-report/transparency-report.routes';
import { transparencyRoutes } from './routes/transparency/transparency.routes';
import { userRoutes } from './routes/users/users.routes';
import { webhookEndpointRoutes } from './routes/webhook-endpoints/webhook-endpoints.routes';
import { MemberStore } from './store/member-store';
import type { UseCaseDeps } from './use-cases/deps';
import { useCaseDeps, type UseCaseClients } from './use-cases/wiring';

export { appSettings, type AppSettings } from './app-settings';

export const API_PREFIX = '/api/v1';

/** The clients the use cases are built from (the tokens and the cache TTL are derived here), and the app's own. */
export interface AppDeps extends Omit<UseCaseClients, 'configTtlMs' | 'appealTokens' | 'complaintTokens'> {
  authenticator: ApiKeyAuthenticator;
}

/**
 * One feature of the HTTP app: the platform's module (its name; the gateway's features start and stop nothing, the
 * clients they share do, in `main.ts`), with the routes it serves.
 */
export interface HttpFeature extends FeatureModule {
  /** Registers the feature's routes below the API prefix (authenticated by API key). */
  api?(api: ApiRouter, deps: UseCaseDeps): void;
  /** A router of its own, mounted before the API's (the console, the appeal page). */
  router?(deps: UseCaseDeps): Router;
}

/**
 * The gateway's features, in the order their routes are registered (the OpenAPI document lists them so). A new
 * feature is a folder under `routes/` (and its use cases under `use-cases/`) and one line here.
 */
export function httpFeatures(deps: AppDeps, tokens: AppealTokenPair): HttpFeature[] {
  const { settings, log } = deps;
  const routes = (name: string, ...register: Array<(api: ApiRouter, deps: UseCaseDeps) => void>): HttpFeature => ({
    name,
    api: (api, parts) => register.forEach((add) => add(api, parts)),
  });
  return [
    routes('moderation', moderateRoutes, ingestRoutes),
    routes('records and users', recordRoutes, userRoutes, appealRoutes, reportRoutes),
    routes('rules', ruleRoutes, shadowVersionRoutes, policyRoutes),
    routes('statements', statementRoutes),
    routes('backtests', backtestRoutes, retroactionRoutes),
    routes('precision', precisionRoutes),
    routes('transparency', transparencyRoutes, transparencyReportRoutes),
    routes('webhooks', webhookEndpointRoutes),
    routes('hash banks', hashBankRoutes, hashFeedRoutes),
    {
      name: 'console',
      router: (parts) =>
        consoleRoutes(
          { ...parts, members: new MemberStore(deps.db), log },
          {
            sessionTtlSeconds: settings.consoleSessionTtlSeconds,
            lockoutAttempts: settings.consoleLockoutAttempts,
            lockoutSeconds: settings.consoleLockoutSeconds,
            signInPerMinute: settings.consoleSignInPerMinute,
            bodyLimitBytes: settings.bodyLimitBytes,
            publicUrl: settings.publicUrl,
          },
        ),
    },
    {
      name: 'appeal page',
      router: (parts) =>
        appealPageRoutes({ ...parts, log }, tokens.appealTokens, tokens.complaintTokens, {
          perMinute: settings.appealPagePerMinute,
          bodyLimitBytes: 16 * 1024,
          publicUrl: settings.publicUrl,
        }),
    },
  ];
}

/** Builds the HTTP API. No I/O here: every client comes in through `deps`. */
export function createApp(deps: AppDeps): Koa {
  const app = new Koa({ proxy: deps.settings.trustProxy });
  app.silent = true;
  app.on('error', (err: unknown) => deps.log.error({ err }, 'unhandled http error'));

  const tokens = appealTokensOf(deps.settings);
  const features = httpFeatures(deps, tokens);
  const parts = useCaseDeps({ ...deps, ...tokens, configTtlMs: deps.authenticator.ttlMs });
  const routers = features.flatMap((feature) => (feature.router ? [feature.router(parts)] : []));
  const api = new ApiRouter(API_PREFIX, deps.settings.bodyLimitBytes);
  for (const feature of features) feature.api?.(api, parts);

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
  for (const router of routers) app.use(router.routes());
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
