import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import {
  COLLECTIONS,
  loadModerationPackage,
  topicNames,
  type Command,
  type ModerationServiceClient,
  type Topics,
} from '@vigil/proto';
import { Kafka, logLevel, type KafkaMessage } from 'kafkajs';
import { MongoClient, type Db } from 'mongodb';
import pino from 'pino';
import { Registry } from 'prom-client';
import { createModerator, type Moderator, type ModeratorConfig } from '../../src/app';
import { loadConfig } from '../../src/config';
import { countStoreCommands } from '@vigil/proto/platform';
import type { ModerationEngine } from '../../src/engine';
import { TopicReaders, grpcToken, testServers, uniqueName } from '../../../deploy/test-support';

export interface Harness {
  moderator: Moderator;
  client: ModerationServiceClient;
  /** Calls one unary RPC with a deadline (15 s unless given) and the harness's token; rejects with the ServiceError. */
  call<Req, Res>(
    method: Extract<keyof ModerationServiceClient, string>,
    request: Req,
    metadata?: grpc.Metadata,
    deadlineMs?: number,
  ): Promise<Res>;
  /** The token the moderator was started with. */
  token: string;
  /** Registers a new tenant in the `tenants` collection, as the gateway's admin CLI does; returns its id. */
  newTenant(): Promise<string>;
  db: Db;
  mongo: MongoClient;
  kafka: Kafka;
  topics: Topics;
  /** Every message of a topic from the beginning, with a group of its own: the array fills as they arrive. */
  collect(topic: string): Promise<KafkaMessage[]>;
  /** The moderator's metrics. */
  registry: Registry;
  /** Every log line the moderator wrote, raw. */
  logText(): string;
  close(): Promise<void>;
}

/** Starts a moderator in process on port 0 against the real servers, with its own database, topics and group. */
export async function startHarness(
  overrides: Partial<ModeratorConfig> = {},
  engine?: ModerationEngine,
  storeAnswers?: () => Promise<boolean>,
): Promise<Harness> {
  const servers = testServers();
  const dbName = uniqueName('mod');
  const prefix = `${uniqueName('t')}.`;
  let logs = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs += chunk.toString();
      done();
    },
  });
  const log = pino({ level: 'debug' }, sink);
  const mongo = new MongoClient(servers.mongoUrl, { serverSelectionTimeoutMS: 5000, monitorCommands: true });
  const kafka = new Kafka({ clientId: 'moderator-test', brokers: servers.kafkaBrokers, logLevel: logLevel.NOTHING });
  const config: ModeratorConfig = {
    // The configuration's defaults, as a deployment that sets none of these variables gets them.
    ...loadConfig({
      MONGO_URL: servers.mongoUrl,
      KAFKA_BROKERS: servers.kafkaBrokers.join(','),
      MODERATOR_GRPC_TOKEN: grpcToken(),
    }),
    GRPC_PORT: 0,
    GRPC_HOST: '127.0.0.1',
    MODERATOR_GRPC_TOKEN: grpcToken(),
    MONGO_DB: dbName,
    KAFKA_TOPIC_PREFIX: prefix,
    KAFKA_GROUP_ID: uniqueName('grp'),
    KAFKA_TOPIC_PARTITIONS: 3,
    INGEST_CONSUMER_ENABLED: true,
    INGEST_CONCURRENCY: 3,
    INGEST_KEY_CONCURRENCY: 8,
    INGEST_RETRY_INITIAL_MS: 50,
    INGEST_RETRY_MAX_MS: 1000,
    INGEST_MAX_UNEXPECTED_ATTEMPTS: 3,
    OUTBOX_POLL_MS: 100,
    OUTBOX_MIN_GAP_MS: 5,
    OUTBOX_BATCH_SIZE: 100,
    TENANT_CONFIG_TTL_MS: 0,
    KNOWN_TENANT_TTL_MS: 60000,
    ...overrides,
  };
  const registry = new Registry();
  // As main.ts counts them: `moderator_store_commands_total` by command name.
  countStoreCommands(mongo, registry, 'moderator');
  const readers = new TopicReaders(kafka);
  const moderator = await createModerator({ config, log, mongo, kafka, engine, registry, storeAnswers });
  const { ModerationService } = loadModerationPackage().vigil.moderation.v1;
  // No credentials of its own: `call` sends the token as metadata, so a test can also send none or a wrong one.
  const client = new ModerationService(`127.0.0.1:${moderator.grpcPort}`, grpc.credentials.createInsecure());
  const withToken = () => {
    const metadata = new grpc.Metadata();
    metadata.set('authorization', `Bearer ${config.MODERATOR_GRPC_TOKEN}`);
    return metadata;
  };

  return {
    moderator,
    client,
    token: config.MODERATOR_GRPC_TOKEN,
    call<Req, Res>(
      method: string,
      request: Req,
      metadata: grpc.Metadata = withToken(),
      deadlineMs = 15000,
    ): Promise<Res> {
      return new Promise((resolve, reject) => {
        const fn = (client as unknown as Record<string, grpc.requestCallback<Res> & ((...args: unknown[]) => void)>)[
          method
        ];
        if (!fn) throw new Error(`no method ${method}`);
        fn.call(
          client,
          request,
          metadata,
          { deadline: Date.now() + deadlineMs },
          (err: grpc.ServiceError | null, value?: Res) => (err ? reject(err) : resolve(value as Res)),
        );
      });
    },
    async newTenant() {
      const tenantId = `ten_${randomBytes(8).toString('hex')}`;
      await mongo
        .db(dbName)
        .collection<{ _id: string; name: string; createdAt: Date }>(COLLECTIONS.tenants)
        .insertOne({ _id: tenantId, name: tenantId, createdAt: new Date() });
      return tenantId;
    },
    db: mongo.db(dbName),
    mongo,
    kafka,
    topics: topicNames(prefix),
    collect: (topic) => readers.collect(topic),
    registry,
    logText: () => logs,
    async close() {
      await readers.disconnect();
      client.close();
      await moderator.stopIntake();
      await moderator.drain();
      await mongo
        .db(dbName)
        .dropDatabase()
        .catch(() => undefined);
      await mongo.close();
    },
  };
}

export const content = (text: string) => ({ text, imageUrls: [], externalUrls: [] });

/** An ingest command for a post with this text (and a user by client id), with an id of its own. */
export function ingestCommand(tenantId: string, clientId: string, text: string, user?: string): Command {
  const id = uniqueName('cmd');
  return {
    id,
    type: 'IngestRecord',
    tenantId,
    issuedAt: new Date().toISOString(),
    correlationId: id,
    data: { clientId, name: 'n', entity: 'post', content: content(text), user: user ? { clientId: user } : undefined },
  };
}
