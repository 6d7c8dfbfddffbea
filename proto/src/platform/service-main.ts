// The composition-root steps every service repeats: the clients built from the shared settings, and the lifecycle of
// a consumer service (admin server, ordered shutdown, then the service itself). Each `src/main.ts` adds its own parts.
import { Kafka, type KafkaConfig } from 'kafkajs';
import { MongoClient } from 'mongodb';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { startAdminServer } from './admin-server';
import { stopIdleKafkaTimers } from './kafka-idle';
import { kafkaLogCreator, kafkaLogLevel } from './kafka-log';
import { createLogger } from './logger';
import { collectProcessMetrics } from './process-metrics';
import { untilDone } from './retry';
import { installShutdown } from './shutdown';
import { countStoreCommands, watchStoreCommands } from './store-metrics';

export type ServiceName = 'gateway' | 'moderator' | 'notifier';

/** The settings every service's `src/config.ts` declares. */
export interface ServiceSettings {
  LOG_LEVEL: string;
  ADMIN_PORT: number;
  ADMIN_HOST: string;
  MONGO_URL: string;
  KAFKA_BROKERS: string[];
  SHUTDOWN_TIMEOUT_MS: number;
}

/** The clients every service starts with; none connects yet (the drivers connect on first use). */
export interface ServiceClients {
  log: Logger;
  registry: Registry;
  mongo: MongoClient;
  kafka: Kafka;
}

/** Client options a service may add to the shared ones (id, brokers and log bridge are set here). */
export type KafkaOptions = Omit<KafkaConfig, 'clientId' | 'brokers' | 'logLevel' | 'logCreator'>;

/**
 * Logger, metrics registry (process and store-command metrics, and the watch over unanswered store commands), store
 * client and Kafka client of `service`.
 */
export function createServiceClients(
  service: ServiceName,
  settings: ServiceSettings,
  kafkaOptions: KafkaOptions = {},
): ServiceClients {
  const log = createLogger(settings.LOG_LEVEL, service);
  const registry = new Registry();
  collectProcessMetrics(registry, service);
  const mongo = new MongoClient(settings.MONGO_URL, { serverSelectionTimeoutMS: 5000, monitorCommands: true });
  countStoreCommands(mongo, registry, service);
  watchStoreCommands(mongo, registry, service, log);
  stopIdleKafkaTimers();
  const kafka = new Kafka({
    ...kafkaOptions,
    clientId: `vigil-${service}`,
    brokers: settings.KAFKA_BROKERS,
    logLevel: kafkaLogLevel(log),
    logCreator: kafkaLogCreator(log),
  });
  return { log, registry, mongo, kafka };
}

/** A started consumer service, as its shutdown phases see it. */
export interface RunningService {
  /** Dependencies answer: readiness. */
  ready(): Promise<boolean>;
  /** Shutdown phase 1: take no more work. */
  stopIntake(): Promise<void>;
  /** Shutdown phase 2: finish the work taken. */
  drain(): Promise<void>;
}

/**
 * Starts the admin server and installs the shutdown phases first, so a service that is still starting is live, not
 * ready, and stops cleanly; then starts the service with `start`.
 */
export async function runService(
  settings: ServiceSettings,
  clients: ServiceClients,
  start: () => Promise<RunningService>,
): Promise<void> {
  const { log, registry, mongo } = clients;
  // Set once started; the admin server and the shutdown hooks exist before it.
  const started: { service?: RunningService } = {};
  const admin = await startAdminServer({
    port: settings.ADMIN_PORT,
    host: settings.ADMIN_HOST,
    registry,
    readiness: async () => (started.service ? started.service.ready() : false),
    log,
  });

  installShutdown(log, settings.SHUTDOWN_TIMEOUT_MS, {
    stopIntake: async () => {
      admin.drain();
      await started.service?.stopIntake();
    },
    drain: async () => {
      await started.service?.drain();
    },
    close: async () => {
      await mongo.close();
      await admin.close();
    },
  });

  started.service = await start();
}

/** Runs a composition root; a failure to start is printed (the logger may not exist yet) and exits with 1. */
export function runMain(service: ServiceName, main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    process.stderr.write(`${service} failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}

/**
 * Connects the store client, retrying until it holds. The driver closes the client's topology when its first connect
 * fails and keeps using that closed topology for every later operation ("Topology is closed"); a new connect()
 * replaces it. Every service calls this before its first store command.
 */
export function connectStore(log: Logger, mongo: MongoClient): Promise<void> {
  return untilDone(log, 'store connection', () => mongo.connect());
}
