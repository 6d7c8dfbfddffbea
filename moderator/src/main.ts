import * as grpc from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import { Kafka, logLevel } from 'kafkajs';
import { MongoClient } from 'mongodb';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { loadConfig } from './config';
import { startAdminServer } from './platform/admin-server';
import { createLogger } from './platform/logger';
import { installShutdown } from './platform/shutdown';

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.LOG_LEVEL, 'moderator');
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'moderator_' });

  const mongo = new MongoClient(config.MONGO_URL, { serverSelectionTimeoutMS: 5000 });
  const kafka = new Kafka({ clientId: 'vigil-moderator', brokers: config.KAFKA_BROKERS, logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });

  const health = new HealthImplementation({ '': 'NOT_SERVING' });
  const server = new grpc.Server();
  health.addToServer(server);
  const grpcPort = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`0.0.0.0:${config.GRPC_PORT}`, grpc.ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    ),
  );
  log.info({ port: grpcPort }, 'grpc server listening');

  let producerReady = false;
  const readiness = async (): Promise<boolean> => {
    if (!producerReady) return false;
    await mongo.db(config.MONGO_DB).command({ ping: 1 });
    return true;
  };
  const admin = await startAdminServer({ port: config.ADMIN_PORT, registry, readiness, log });

  void mongo.connect().catch((err: unknown) => log.warn({ err }, 'mongo not reachable yet'));
  void producer.connect().then(
    () => {
      producerReady = true;
      health.setStatus('', 'SERVING');
      log.info('kafka producer connected');
    },
    (err: unknown) => log.error({ err }, 'kafka producer failed to connect'),
  );

  installShutdown(log, config.SHUTDOWN_TIMEOUT_MS, {
    stopIntake: async () => {
      admin.drain();
      health.setStatus('', 'NOT_SERVING');
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    },
    drain: async () => {
      await producer.disconnect();
    },
    close: async () => {
      await mongo.close();
      await admin.close();
    },
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`moderator failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
