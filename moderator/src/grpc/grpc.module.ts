import type { ModeratorModule, SharedParts } from '../shared-parts';
import { startGrpcServer, type GrpcServer, type GrpcServerConfig, type GrpcServerDeps } from './server';

export interface GrpcModule extends ModeratorModule {
  /** The port the server listens on, once started. */
  readonly port: number;
  /** grpc.health.v1 answers SERVING from now on: called once every module started. */
  serve(): void;
}

/**
 * The ModerationService and grpc.health.v1. It binds its port last, NOT_SERVING until `serve`, and is the first to
 * stop taking calls (NOT_SERVING, then the calls in flight finish).
 */
export function grpcModule(
  config: GrpcServerConfig,
  { log, versions, metrics }: SharedParts,
  deps: Pick<GrpcServerDeps, 'useCases' | 'queries' | 'tenants' | 'hashBanks' | 'hashQuarantine' | 'hashFeeds'>,
): GrpcModule {
  let server: GrpcServer | undefined;
  const started = (): GrpcServer => {
    if (!server) throw new Error('the gRPC server has not started');
    return server;
  };
  return {
    name: 'grpc-server',
    get port() {
      return started().port;
    },
    async start() {
      server = await startGrpcServer({ config, ...deps, versions, log, metrics });
    },
    serve: () => started().setServing(true),
    stopIntake: () => server?.close(),
  };
}
