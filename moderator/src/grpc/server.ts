import * as grpc from '@grpc/grpc-js';
import { loadModerationPackage, type TenantVersions } from '@vigil/proto';
import { HealthImplementation } from 'grpc-health-check';
import type { Logger } from 'pino';
import type { Histogram } from 'prom-client';
import type { Config } from '../config';
import type { HashBankUseCases } from '../hash-banks/hash-bank-use-cases';
import type { QuarantineUseCases } from '../hash-banks/quarantine/quarantine-use-cases';
import type { FeedUseCases } from '../hash-banks/feeds/feed-use-cases';
import type { ModeratorMetrics } from '../metrics';
import type { UseCases } from '../service/use-cases';
import type { Queries } from '../service/queries';
import type { KnownTenants } from '../store/known-tenants';
import { bearerTokenInterceptor } from './auth';
import { KeyedLimit } from './keyed-limit';
import { createModerationHandlers } from './moderation-handlers';
import { TenantActivity } from './tenant-activity';

/** The settings the gRPC server runs with (see `config.ts`). */
export type GrpcServerConfig = Pick<
  Config,
  | 'GRPC_PORT'
  | 'GRPC_HOST'
  | 'GRPC_MAX_CONNECTION_AGE_MS'
  | 'MODERATOR_GRPC_TOKEN'
  | 'MODERATE_TENANT_CONCURRENCY'
  | 'MODERATE_QUEUE_PER_TENANT'
  | 'MODERATE_SHARED_WINDOW_MS'
  | 'MODERATE_HEAVY_YIELD_MS'
>;

export interface GrpcServerDeps {
  config: GrpcServerConfig;
  useCases: UseCases;
  queries: Queries;
  tenants: KnownTenants;
  versions: TenantVersions;
  log: Logger;
  metrics?: ModeratorMetrics;
  /** Hash banks' API (its methods answer failed_precondition without it). */
  hashBanks?: HashBankUseCases;
  hashQuarantine?: QuarantineUseCases;
  /** Hash feeds' API (its methods answer failed_precondition without it). */
  hashFeeds?: FeedUseCases;
}

export interface GrpcServer {
  port: number;
  /** grpc.health.v1 answers SERVING (true) or NOT_SERVING; it starts NOT_SERVING. */
  setServing(serving: boolean): void;
  /** NOT_SERVING, then the server stops taking calls and waits for those in flight. */
  close(): Promise<void>;
}

const SERVICE_NAME = 'vigil.moderation.v1.ModerationService';

/**
 * The ModerationService and grpc.health.v1 on one port: every ModerationService call needs the bearer token, Moderate
 * calls are limited per tenant (KeyedLimit, TenantActivity), and each call's duration is measured.
 */
export async function startGrpcServer(deps: GrpcServerDeps): Promise<GrpcServer> {
  const { config, useCases, queries, tenants, versions, log, metrics, hashBanks, hashQuarantine, hashFeeds } = deps;
  const health = new HealthImplementation({
    '': 'NOT_SERVING',
    [SERVICE_NAME]: 'NOT_SERVING',
  });
  const server = new grpc.Server({
    interceptors: [bearerTokenInterceptor(config.MODERATOR_GRPC_TOKEN)],
    // grpc-js clients resolve their target again only when a connection ends: aged connections let gateways find new
    // moderator pods. A call in flight at the GOAWAY gets up to a minute to finish (the gateway's deadlines are 5 s).
    'grpc.max_connection_age_ms': config.GRPC_MAX_CONNECTION_AGE_MS,
    'grpc.max_connection_age_grace_ms': 60000,
  });
  health.addToServer(server);
  const handlers = createModerationHandlers({
    hashBanks,
    hashQuarantine,
    hashFeeds,
    useCases,
    queries,
    tenants,
    versions,
    log: log.child({ component: 'grpc' }),
    moderateLimit: new KeyedLimit({
      capacity: config.MODERATE_TENANT_CONCURRENCY,
      maxWaiting: config.MODERATE_QUEUE_PER_TENANT,
      sharedWindowMs: config.MODERATE_SHARED_WINDOW_MS,
    }),
    activity: new TenantActivity(),
    heavyYieldMs: config.MODERATE_HEAVY_YIELD_MS,
    onYield: metrics && {
      begin: () => metrics.heavyYielding.inc(),
      end: (outcome, seconds) => {
        metrics.heavyYielding.dec();
        metrics.heavyYields.observe({ outcome }, seconds);
      },
    },
  });
  server.addService(
    loadModerationPackage().vigil.moderation.v1.ModerationService.service,
    metrics ? timed(handlers, metrics.grpc) : handlers,
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(
      `${hostPart(config.GRPC_HOST)}:${config.GRPC_PORT}`,
      grpc.ServerCredentials.createInsecure(),
      (err, bound) => (err ? reject(err) : resolve(bound)),
    ),
  );
  log.info({ port, host: config.GRPC_HOST }, 'grpc server listening');

  const setServing = (serving: boolean) => {
    const status = serving ? 'SERVING' : 'NOT_SERVING';
    health.setStatus('', status);
    health.setStatus(SERVICE_NAME, status);
  };
  return {
    port,
    setServing,
    async close() {
      setServing(false);
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    },
  };
}

/** An IPv6 address is bracketed in a gRPC target (`[::1]:50051`). */
const hostPart = (host: string): string => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);

/** The handlers, each timed into `histogram` by method and outcome. */
function timed<H extends grpc.UntypedServiceImplementation>(
  handlers: H,
  histogram: Histogram<'method' | 'outcome'>,
): H {
  const wrapped: grpc.UntypedServiceImplementation = {};
  for (const [method, handler] of Object.entries(handlers)) {
    wrapped[method] = ((call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      const end = histogram.startTimer({ method });
      (handler as grpc.handleUnaryCall<unknown, unknown>)(call, (err, value) => {
        end({ outcome: err ? 'error' : 'ok' });
        callback(err, value);
      });
    }) as grpc.handleUnaryCall<unknown, unknown>;
  }
  return wrapped as H;
}
