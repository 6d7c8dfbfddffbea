import { Kafka } from 'kafkajs';
import { MongoClient } from 'mongodb';
import { Registry } from 'prom-client';
import { createNotifier, type Notifier } from './app';
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
  const log = createLogger(config.LOG_LEVEL, 'notifier');
  const registry = new Registry();
  collectProcessMetrics(registry, 'notifier');

  const mongo = new MongoClient(config.MONGO_URL, { serverSelectionTimeoutMS: 5000, monitorCommands: true });
  countStoreCommands(mongo, registry, 'notifier');
  stopIdleKafkaTimers();
  const kafka = new Kafka({
    clientId: 'vigil-notifier',
    brokers: config.KAFKA_BROKERS,
    logLevel: kafkaLogLevel(log),
    logCreator: kafkaLogCreator(log),
  });

  // Set once started; the admin server and the shutdown hooks exist before it.
  const started: { notifier?: Notifier } = {};
  const admin = await startAdminServer({
    port: config.ADMIN_PORT,
    host: config.ADMIN_HOST,
    registry,
    readiness: async () => (started.notifier ? started.notifier.ready() : false),
    log,
  });

  installShutdown(log, config.SHUTDOWN_TIMEOUT_MS, {
    stopIntake: async () => {
      admin.drain();
      await started.notifier?.stopIntake();
    },
    drain: async () => {
      await started.notifier?.drain();
    },
    close: async () => {
      await mongo.close();
      await admin.close();
    },
  });

  started.notifier = await createNotifier({ config, log, mongo, kafka, registry });
}

main().catch((err: unknown) => {
  process.stderr.write(`notifier failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
