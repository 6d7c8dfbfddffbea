import { Kafka } from 'kafkajs';
import { MongoClient } from 'mongodb';
import { Registry } from 'prom-client';
import { createModerator, type Moderator } from './app';
import { loadConfig } from './config';
import { startAdminServer } from './platform/admin-server';
import { stopIdleKafkaTimers } from './platform/kafka-idle';
import { createLogger } from './platform/logger';
import { collectProcessMetrics } from './platform/process-metrics';
import { countStoreCommands } from './platform/store-metrics';
import { kafkaLogCreator, kafkaLogLevel } from './platform/kafka-log';
import { installShutdown } from './platform/shutdown';

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.LOG_LEVEL, 'moderator');
  const registry = new Registry();
  collectProcessMetrics(registry, 'moderator');

  const mongo = new MongoClient(config.MONGO_URL, { serverSelectionTimeoutMS: 5000, monitorCommands: true });
  countStoreCommands(mongo, registry, 'moderator');
  stopIdleKafkaTimers();
  const kafka = new Kafka({
    clientId: 'vigil-moderator',
    brokers: config.KAFKA_BROKERS,
    logLevel: kafkaLogLevel(log),
    logCreator: kafkaLogCreator(log),
  });

  // Set once started; the admin server and the shutdown hooks exist before it.
  const started: { moderator?: Moderator } = {};
  const admin = await startAdminServer({
    port: config.ADMIN_PORT,
    host: config.ADMIN_HOST,
    registry,
    readiness: async () => (started.moderator ? started.moderator.ready() : false),
    log,
  });

  installShutdown(log, config.SHUTDOWN_TIMEOUT_MS, {
    stopIntake: async () => {
      admin.drain();
      await started.moderator?.stopIntake();
    },
    drain: async () => {
      await started.moderator?.drain();
    },
    close: async () => {
      await mongo.close();
      await admin.close();
    },
  });

  started.moderator = await createModerator({ config, log, mongo, kafka, registry });
}

main().catch((err: unknown) => {
  process.stderr.write(`moderator failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
