import { Kafka, logLevel } from 'kafkajs';
import { MongoClient } from 'mongodb';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { loadConfig } from './config';
import { startAdminServer } from './platform/admin-server';
import { createLogger } from './platform/logger';
import { installShutdown } from './platform/shutdown';

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.LOG_LEVEL, 'notifier');
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'notifier_' });

  const mongo = new MongoClient(config.MONGO_URL, { serverSelectionTimeoutMS: 5000 });
  const kafka = new Kafka({ clientId: 'vigil-notifier', brokers: config.KAFKA_BROKERS, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();

  let kafkaReady = false;
  const readiness = async (): Promise<boolean> => {
    if (!kafkaReady) return false;
    await mongo.db(config.MONGO_DB).command({ ping: 1 });
    return true;
  };
  const adminServer = await startAdminServer({ port: config.ADMIN_PORT, registry, readiness, log });

  void mongo.connect().catch((err: unknown) => log.warn({ err }, 'mongo not reachable yet'));
  void admin.connect().then(
    () => {
      kafkaReady = true;
      log.info('kafka connected');
    },
    (err: unknown) => log.error({ err }, 'kafka failed to connect'),
  );

  installShutdown(log, config.SHUTDOWN_TIMEOUT_MS, {
    stopIntake: async () => {
      adminServer.drain();
      await admin.disconnect();
    },
    drain: async () => {},
    close: async () => {
      await mongo.close();
      await adminServer.close();
    },
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`notifier failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
