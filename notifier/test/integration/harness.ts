import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  COLLECTIONS,
  HEADERS,
  recordIdFor,
  TenantVersions,
  topicNames,
  userIdFor,
  type DomainEvent,
  type RecordDoc,
  type Topics,
  type UserDoc,
  type WebhookCommand,
  type WebhookEndpointDoc,
} from '@vigil/proto';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { MongoClient, type Db } from 'mongodb';
import pino from 'pino';
import { Registry } from 'prom-client';
import { ulid } from 'ulid';
import { testServers, uniqueName } from '../../../deploy/test-support';
import { createNotifier, type Notifier, type NotifierConfig } from '../../src/app';
import { loadConfig } from '../../src/config';
import { EndpointCache } from '../../src/delivery/endpoint-cache';
import { createHttpSender } from '../../src/delivery/http-sender';
import { DeliveryScheduler, type SchedulerOptions } from '../../src/delivery/scheduler';
import { addressPolicy } from '../../src/delivery/ssrf';
import type { DeliveryDoc, DeliveryStore } from '../../src/store/delivery-store';
import { EndpointStateStore } from '../../src/store/endpoint-states';
import { UpstreamReads } from '../../src/store/upstream-reads';

const RETRY_SCHEDULE = '0.2,0.5,1';

/** The notifier's config for tests: compressed retries, short timeout, loopback allowed. */
function testConfig(
  dbName: string,
  prefix: string,
  overrides: Partial<Record<string, string>> = {},
): Record<string, string> {
  return {
    MONGO_DB: dbName,
    KAFKA_TOPIC_PREFIX: prefix,
    KAFKA_GROUP_ID: `${prefix}notifier`,
    KAFKA_TOPIC_PARTITIONS: '3',
    WEBHOOK_RETRY_SCHEDULE_S: RETRY_SCHEDULE,
    WEBHOOK_TIMEOUT_MS: '1000',
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
    WEBHOOK_RETRY_AFTER_MAX_S: '10',
    DELIVERY_POLL_MS: '100',
    DELIVERY_LEASE_MARGIN_MS: '1000',
    DELIVERY_PROJECTION_WAIT_MS: '2000',
    DUE_BUCKET_MS: '1000',
    DUE_GRACE_MS: '1000',
    // Endpoint changes take effect at once in these tests; the cache has tests of its own.
    ENDPOINT_CACHE_MS: '0',
    ...overrides,
  };
}

export interface Tenant {
  tenantId: string;
  endpoint(url: string, extra?: Partial<WebhookEndpointDoc>): Promise<WebhookEndpointDoc>;
  record(clientId: string, extra?: Partial<RecordDoc>): Promise<RecordDoc>;
  user(clientId: string, extra?: Partial<UserDoc>): Promise<UserDoc>;
}

export interface World {
  db: Db;
  topics: Topics;
  notifier?: Notifier;
  /** The notifier's metrics. */
  registry: Registry;
  /** Starts the notifier in-process (with `overrides` over testConfig). */
  start(overrides?: Partial<Record<string, string>>): Promise<Notifier>;
  env: Record<string, string>;
  /** A fresh tenant: its endpoints see only its events. */
  tenant(): Tenant;
  publish(...events: DomainEvent[]): Promise<void>;
  /** Publishes the events again, as the moderator's outbox sweep does: with the `vigil-replayed` header. */
  republish(...events: DomainEvent[]): Promise<void>;
  command(command: WebhookCommand): Promise<void>;
  deliveries(filter?: Record<string, unknown>): Promise<DeliveryDoc[]>;
  /** The names of the commands sent on `collection` through the world's client (the in-process notifier's) so far. */
  commandsOn(collection: string): string[];
  close(): Promise<void>;
}

export const SECRET = `whsec_${randomBytes(24).toString('base64')}`;

export async function createWorld(): Promise<World> {
  const servers = testServers();
  const dbName = uniqueName('notifier');
  const prefix = `${uniqueName('nt')}.`;
  const topics = topicNames(prefix);
  const mongo = new MongoClient(servers.mongoUrl, { monitorCommands: true });
  const commands: { name: string; collection: unknown }[] = [];
  mongo.on('commandStarted', (event) => {
    commands.push({ name: event.commandName, collection: event.command[event.commandName] });
  });
  await mongo.connect();
  const db = mongo.db(dbName, { ignoreUndefined: true });
  const kafka = new Kafka({ clientId: 'notifier-test', brokers: servers.kafkaBrokers, logLevel: logLevel.NOTHING });
  const producer: Producer = kafka.producer();
  await producer.connect();
  const env = testConfig(dbName, prefix);
  const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

  const world: World = {
    db,
    topics,
    env,
    registry: new Registry(),
    async start(overrides = {}) {
      const config: NotifierConfig = loadConfig({
        ...env,
        ...overrides,
        MONGO_URL: servers.mongoUrl,
        KAFKA_BROKERS: servers.kafkaBrokers.join(','),
      });
      world.notifier = await createNotifier({ config, log, mongo, kafka, registry: world.registry });
      return world.notifier;
    },
    tenant: () => tenantIn(db, `ten_${ulid()}`),
    async publish(...events) {
      await producer.send({
        topic: topics.events,
        acks: -1,
        messages: events.map((event) => ({
          key: event.stream,
          value: JSON.stringify(event),
          headers: { [HEADERS.eventId]: event.id, [HEADERS.eventType]: event.type },
        })),
      });
    },
    async republish(...events) {
      await producer.send({
        topic: topics.events,
        acks: -1,
        messages: events.map((event) => ({
          key: event.stream,
          value: JSON.stringify(event),
          headers: { [HEADERS.eventId]: event.id, [HEADERS.eventType]: event.type, [HEADERS.replayed]: '1' },
        })),
      });
    },
    async command(command) {
      const key = 'deliveryId' in command ? command.deliveryId : command.endpointId;
      await producer.send({
        topic: topics.webhookCommands,
        acks: -1,
        messages: [{ key, value: JSON.stringify(command) }],
      });
    },
    commandsOn: (collection) => commands.filter((c) => c.collection === collection).map((c) => c.name),
    deliveries: (filter = {}) =>
      db.collection<DeliveryDoc>(COLLECTIONS.deliveries).find(filter).sort({ createdAt: 1 }).toArray(),
    async close() {
      if (world.notifier) {
        await world.notifier.stopIntake();
        await world.notifier.drain();
      }
      await producer.disconnect();
      await db.dropDatabase().catch(() => undefined);
      await mongo.close();
    },
  };
  return world;
}

function tenantIn(db: Db, tenantId: string): Tenant {
  return {
    tenantId,
    async endpoint(url, extra = {}) {
      const now = new Date();
      const doc: WebhookEndpointDoc = {
        _id: `we_${ulid()}`,
        tenantId,
        url,
        events: [],
        enabled: true,
        secrets: [{ secret: SECRET, createdAt: now }],
        createdAt: now,
        updatedAt: now,
        ...extra,
      };
      await db.collection<WebhookEndpointDoc>(COLLECTIONS.webhookEndpoints).insertOne(doc);
      return doc;
    },
    async record(clientId, extra = {}) {
      const now = new Date();
      const doc: RecordDoc = {
        _id: recordIdFor(tenantId, clientId),
        tenantId,
        clientId,
        name: `Name of ${clientId}`,
        entity: 'Post',
        protected: false,
        passthrough: false,
        reasons: [],
        rules: [],
        manual: false,
        testMode: false,
        deleted: false,
        version: 2,
        sort: ulid(),
        createdAt: now,
        updatedAt: now,
        ...extra,
      };
      await db.collection<RecordDoc>(COLLECTIONS.records).insertOne(doc);
      return doc;
    },
    async user(clientId, extra = {}) {
      const now = new Date();
      const doc: UserDoc = {
        _id: userIdFor(tenantId, clientId),
        tenantId,
        clientId,
        protected: false,
        manual: false,
        version: 2,
        sort: ulid(),
        createdAt: now,
        updatedAt: now,
        ...extra,
      };
      await db.collection<UserDoc>(COLLECTIONS.users).insertOne(doc);
      return doc;
    },
  };
}

/** A new event of `type` at version 2 of `stream`, in the tenant's name. */
function versionTwo<T extends DomainEvent['type']>(
  tenantId: string,
  stream: string,
  type: T,
  data: Extract<DomainEvent, { type: T }>['data'],
): DomainEvent {
  const envelope = {
    id: ulid(),
    tenantId,
    stream,
    version: 2,
    occurredAt: new Date().toISOString(),
    correlationId: ulid(),
  };
  return { ...envelope, type, data } as DomainEvent;
}

/** A RecordModerated event at version 2 of the record's stream. */
export function recordModerated(
  world: Pick<Tenant, 'tenantId'>,
  record: RecordDoc,
  data: Partial<Extract<DomainEvent, { type: 'RecordModerated' }>['data']> = {},
): DomainEvent {
  return versionTwo(world.tenantId, `record-${record._id}`, 'RecordModerated', {
    recordId: record._id,
    moderationId: `mod_${ulid()}`,
    status: 'Flagged',
    previousStatus: 'Compliant',
    via: 'Automation',
    reasons: ['blocklist'],
    rules: ['default'],
    testMode: false,
    ...(record.userId ? { userId: record.userId } : {}),
    ...data,
  });
}

export function userStatusChanged(
  world: Pick<Tenant, 'tenantId'>,
  user: UserDoc,
  data: Partial<Extract<DomainEvent, { type: 'UserStatusChanged' }>['data']> = {},
): DomainEvent {
  return versionTwo(world.tenantId, `user-${user._id}`, 'UserStatusChanged', {
    userId: user._id,
    actionId: `act_${ulid()}`,
    status: 'Suspended',
    previousStatus: 'Compliant',
    via: 'Manual',
    testMode: false,
    ...data,
  });
}

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, received: Received) => void;

/** A real webhook receiver on 127.0.0.1, port 0 unless given; `handler` answers (default 200). */
/** A producer connected to the test Kafka, for messages a test writes by hand (its own headers, malformed values). */
export async function connectedProducer(clientId: string): Promise<Producer> {
  const producer = new Kafka({ clientId, brokers: testServers().kafkaBrokers, logLevel: logLevel.NOTHING }).producer();
  await producer.connect();
  return producer;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  handler: Handler;
  listen(): Promise<void>;
  close(): Promise<void>;
}

export async function createReceiver(handler?: Handler, port = 0): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    port,
    received: [],
    handler: handler ?? ((_req, res) => res.writeHead(200).end('ok')),
    listen: async () => {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(receiver.port, '127.0.0.1', () => resolve());
      });
      receiver.port = (server.address() as AddressInfo).port;
      receiver.url = `http://127.0.0.1:${receiver.port}/hook`;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const entry = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      receiver.received.push(entry);
      receiver.handler(req, res, entry);
    });
  });
  await receiver.listen();
  return receiver;
}

/** Time buckets of the due queue in the scheduler tests: 1 s wide. */
export const DUE_TIMING = { bucketMs: 1000, graceMs: 1000 };

/** A pending `record.flagged` delivery for the endpoint, due a second before `now`; `body` tells it apart. */
export function dueDelivery(
  tenantId: string,
  endpointId: string,
  now: Date,
  body: Record<string, unknown>,
  recordId = `rec_${ulid()}`,
): DeliveryDoc {
  const subjectId = `mod_${ulid()}`;
  return {
    _id: `dlv_${ulid()}`,
    tenantId,
    endpointId,
    webhookId: `msg_${ulid()}`,
    eventId: ulid(),
    event: 'record.flagged',
    subjectId,
    trigger: {
      kind: 'record',
      event: 'record.flagged',
      subjectId,
      tenantId,
      recordId,
      status: 'Flagged',
      via: 'Automation',
      at: now,
      version: 2,
    },
    body: JSON.stringify({ event: 'record.flagged', ...body }),
    state: 'pending',
    attemptCount: 0,
    cycleAttempts: 0,
    attempts: [],
    dueAt: new Date(now.getTime() - 1000),
    createdAt: now,
    updatedAt: now,
  };
}

/** Writes pending deliveries as the due queue does: in the time bucket of their due time. */
export async function seedDue(db: Db, docs: DeliveryDoc[]): Promise<void> {
  await db
    .collection<DeliveryDoc>(COLLECTIONS.deliveries)
    .insertMany(docs.map((doc) => ({ ...doc, due: String(Math.floor(doc.dueAt.getTime() / DUE_TIMING.bucketMs)) })));
}

/** A delivery scheduler on `store` sending to loopback receivers, with short polls and one quick retry. */
export function testScheduler(
  db: Db,
  store: DeliveryStore,
  overrides: Partial<SchedulerOptions> = {},
): DeliveryScheduler {
  const endpointStates = new EndpointStateStore(db);
  const reads = new UpstreamReads(db, endpointStates);
  return new DeliveryScheduler({
    store,
    endpointStates,
    reads,
    endpoints: new EndpointCache(reads, endpointStates, 1000, new TenantVersions()),
    sender: createHttpSender({ timeoutMs: 5000, policy: addressPolicy(['127.0.0.1/32']) }),
    log: pino({ level: 'silent' }),
    retryScheduleS: [1],
    retryAfterMaxMs: 1000,
    disableAfterMs: 3_600_000,
    concurrency: 16,
    perEndpointConcurrency: 8,
    pollMs: 20,
    leaseMs: 30_000,
    attemptMs: 5000,
    projectionWaitMs: 0,
    ...overrides,
  });
}
