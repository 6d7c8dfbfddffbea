import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { TenantVersions, topicNames, ulid } from '@vigil/proto';
import {
  connectStore,
  createServiceClients,
  ensureTopics,
  installShutdown,
  ModuleList,
  runMain,
  startAdminServer,
  untilDone,
} from '@vigil/proto/platform';
import { appSettings, createApp } from './app';
import { BacktestStore } from './store/backtest-store';
import { RetroactionStore } from './store/retroaction-store';
import { ApiKeyAuthenticator } from './auth/api-key-auth';
import { loadConfig } from './config';
import { createModerationClient, ModeratorClient } from './grpc/moderator-client';
import { CommandProducer, commandProducers } from './kafka/command-producer';
import { SharedRateLimiter } from './rate-limit/shared-rate-limiter';
import { MemberStore } from './store/member-store';
import { RateLimitStore } from './store/rate-limit-store';
import { TenantStore } from './store/tenant-store';
import { ConfigVersionStore } from './store/config-version-store';
import { RuleVersionStore } from './store/rule-version-store';
import { WebhookStore } from './store/webhook-store';

runMain('gateway', async () => {
  const config = loadConfig();
  const { log, registry, mongo, kafka } = createServiceClients('gateway', config, {
    connectionTimeout: config.KAFKA_CONNECTION_TIMEOUT_MS,
    requestTimeout: config.KAFKA_REQUEST_TIMEOUT_MS,
    retry: { retries: config.KAFKA_RETRIES },
  });
  const db = mongo.db(config.MONGO_DB);
  const topics = topicNames(config.KAFKA_TOPIC_PREFIX);
  const commands = new CommandProducer(
    commandProducers(kafka),
    { batchMax: config.KAFKA_BATCH_MAX, lingerMs: config.KAFKA_LINGER_MS, sendTimeoutMs: config.KAFKA_SEND_TIMEOUT_MS },
    log,
  );
  const grpcClient = createModerationClient(config.MODERATOR_ADDRESS, config.MODERATOR_GRPC_TOKEN);
  const versions = new TenantVersions({ confirmedForMs: config.API_KEY_CACHE_TTL_MS });
  const moderator = new ModeratorClient(
    grpcClient,
    {
      moderateMs: config.MODERATE_TIMEOUT_MS,
      defaultMs: config.GRPC_TIMEOUT_MS,
      connectWaitMs: config.MODERATOR_CONNECT_WAIT_MS,
    },
    versions,
  );
  const tenants = new TenantStore(db);
  const authenticator = new ApiKeyAuthenticator(tenants, {
    ttlMs: config.API_KEY_CACHE_TTL_MS,
    maxEntries: config.API_KEY_CACHE_MAX,
    versions,
  });
  // The instance id names this process's counts in the store; the host name (a pod's name) helps an operator read them.
  const rateLimiter = new SharedRateLimiter(
    new RateLimitStore(db),
    log,
    {
      instanceId: `${hostname().slice(0, 64)}:${ulid()}`,
      syncIntervalMs: config.RATE_LIMIT_SYNC_MS,
      relaxedSyncMs: config.RATE_LIMIT_RELAXED_SYNC_MS,
    },
    registry,
  );

  const listening: { server?: http.Server } = {};
  // What starts and stops, in start order; each shutdown phase stops them in reverse: the HTTP server takes no more
  // requests, then the commands taken are flushed, then the shared rate limit stops. Ready when ingest can be
  // accepted: Kafka takes the commands and the store answers (keys, tenants). The moderator is not a condition:
  // without one, /ingest still queues work for it and /moderate answers 503 at once, whereas an unready gateway would
  // take ingest down with it and, with every replica unready, the whole API.
  const modules = new ModuleList(log, [
    {
      name: 'store',
      // Connects in the background: the process is live at once and ready once the store answers.
      start: () => {
        void connectStore(log, mongo)
          .then(() =>
            untilDone(log, 'store indexes', () =>
              Promise.all([
                tenants.ensureIndexes(),
                new WebhookStore(db, new ConfigVersionStore(db, versions)).ensureIndexes(),
                new MemberStore(db).ensureIndexes(),
                new RuleVersionStore(db).ensureIndexes(),
                new BacktestStore(db).ensureIndexes(),
                new RetroactionStore(db).ensureIndexes(),
              ]),
            ),
          )
          .catch((err: unknown) => log.warn({ err }, 'mongo not reachable yet'));
      },
      ready: async () => {
        await db.command({ ping: 1 });
        return true;
      },
    },
    { name: 'rate limit', start: () => rateLimiter.start(), drain: () => rateLimiter.stop() },
    {
      name: 'commands',
      start: () => {
        void ensureTopics(
          kafka,
          [topics.ingest, topics.webhookCommands, topics.backtests],
          config.KAFKA_TOPIC_PARTITIONS,
        )
          .then(() => commands.connect())
          .catch((err: unknown) => log.error({ err }, 'kafka not reachable yet; commands will connect on first use'));
      },
      ready: () => commands.isConnected,
      drain: async () => {
        await commands.drain();
        await commands.disconnect();
      },
    },
    {
      name: 'http',
      start: async () => {
        const app = createApp({
          log,
          registry,
          db,
          authenticator,
          versions,
          moderator,
          commands,
          topics,
          rateLimiter,
          settings: appSettings(config),
        });
        // Koa's callback returns a promise that never rejects (errors go to the error handler).
        const handle = app.callback();
        const server = http.createServer((req, res) => void handle(req, res));
        listening.server = server;
        await new Promise<void>((resolve) => server.listen(config.HTTP_PORT, config.HTTP_HOST, resolve));
        log.info({ port: (server.address() as AddressInfo).port }, 'http server listening');
      },
      stopIntake: async () => {
        const { server } = listening;
        if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    },
  ]);

  const admin = await startAdminServer({
    port: config.ADMIN_PORT,
    host: config.ADMIN_HOST,
    registry,
    readiness: () => modules.ready(),
    log,
  });
  await modules.start();

  installShutdown(log, config.SHUTDOWN_TIMEOUT_MS, {
    stopIntake: async () => {
      admin.drain();
      await modules.stopIntake();
    },
    drain: () => modules.drain(),
    close: async () => {
      grpcClient.close();
      await mongo.close();
      await admin.close();
    },
  });
});
