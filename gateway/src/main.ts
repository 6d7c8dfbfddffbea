import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { Kafka, logLevel } from 'kafkajs';
import { MongoClient } from 'mongodb';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { loadModerationPackage } from '@vigil/proto';
import { createApp } from './app';
import { loadConfig } from './config';
import { startAdminServer } from './platform/admin-server';
import { createLogger } from './platform/logger';
import { installShutdown } from './platform/shutdown';

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.LOG_LEVEL, 'gateway');
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'gateway_' });

  const mongo = new MongoClient(config.MONGO_URL, { serverSelectionTimeoutMS: 5000 });
  const kafka = new Kafka({ clientId: 'vigil-gateway', brokers: config.KAFKA_BROKERS, logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  const { vigil } = loadModerationPackage();
  const moderator = new vigil.moderation.v1.ModerationService(config.MODERATOR_ADDRESS, grpc.credentials.createInsecure());

  let producerReady = false;
  const readiness = async (): Promise<boolean> => {
    if (!producerReady) return false;
    await mongo.db(config.MONGO_DB).command({ ping: 1 });
    const state = moderator.getChannel().getConnectivityState(true);
    return state === grpc.connectivityState.READY || state === grpc.connectivityState.IDLE;
  };

  const admin = await startAdminServer({ port: config.ADMIN_PORT, registry, readiness, log });
  const app = createApp({ log });
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(config.HTTP_PORT, resolve));
  log.info({ port: (server.address() as AddressInfo).port }, 'http server listening');

  // Dependencies connect in the background: the process is live at once and ready once they answer.
  void mongo.connect().catch((err: unknown) => log.warn({ err }, 'mongo not reachable yet'));
  void producer.connect().then(
    () => {
      producerReady = true;
      log.info('kafka producer connected');
    },
    (err: unknown) => log.error({ err }, 'kafka producer failed to connect'),
  );

  installShutdown(log, config.SHUTDOWN_TIMEOUT_MS, {
    stopIntake: async () => {
      admin.drain();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    drain: async () => {
      await producer.disconnect();
    },
    close: async () => {
      moderator.close();
      await mongo.close();
      await admin.close();
    },
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`gateway failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
