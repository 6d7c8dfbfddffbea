import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { Kafka, logLevel, type KafkaMessage } from 'kafkajs';
import { MongoClient, type Db } from 'mongodb';
import pino from 'pino';
import { TenantVersions, topicNames, type Topics } from '@vigil/proto';
import { ensureTopics } from '@vigil/proto/platform';
import { appSettings, createApp, type AppDeps } from '../../src/app';
import { loadConfig } from '../../src/config';
import { hashPassword } from '../../src/console/password';
import { MemberStore, type MemberRole } from '../../src/store/member-store';
import { ApiKeyAuthenticator } from '../../src/auth/api-key-auth';
import { createModerationClient, ModeratorClient } from '../../src/grpc/moderator-client';
import { CommandProducer, commandProducers } from '../../src/kafka/command-producer';
import { SharedRateLimiter } from '../../src/rate-limit/shared-rate-limiter';
import type { ResolveHost } from '../../src/routes/webhook-endpoints/endpoint-url';
import { RateLimitStore } from '../../src/store/rate-limit-store';
import { TenantStore } from '../../src/store/tenant-store';
import { startReceiver, type Receiver } from '../../../deploy/e2e/support';
import {
  ROOT,
  TopicReaders,
  grpcAddressOf,
  grpcToken,
  spawnModerator,
  spawnGateway,
  spawnNotifier,
  testServers,
  uniqueName,
  waitFor,
  type ServiceProcess,
} from '../../../deploy/test-support';

const execFileAsync = promisify(execFile);

export interface GatewayOptions {
  /** Defaults to a closed local port: for tests that never reach the moderator. */
  moderatorAddress?: string;
  /** Token sent to the moderator; this test process's `grpcToken()` by default (what `spawnService` hands it). */
  moderatorToken?: string;
  kafkaBrokers?: string[];
  /** Database and topic prefix to share with a moderator; unique by default. */
  dbName?: string;
  topicPrefix?: string;
  rateLimitPoints?: number;
  /** Windows are aligned on the clock: a test that counts to the limit uses long ones, so none ends meanwhile. */
  rateLimitWindowSeconds?: number;
  bodyLimitBytes?: number;
  kafkaSendTimeoutMs?: number;
  moderateTimeoutMs?: number;
  webhookAllowedCidrs?: string[];
  webhookMaxEndpointsPerTenant?: number;
  /** PROMPT_RULES_ENABLED; false by default, as in a deployment without an LLM. */
  promptRulesEnabled?: boolean;
  /** Resolves webhook hosts at registration; by default `testResolve` (no DNS needed). */
  resolveHost?: ResolveHost;
  /** Create the topics before starting (skip when Kafka is unreachable on purpose). */
  createTopics?: boolean;
  /** SECRETS_ENCRYPTION_KEY: the gateway stores payments keys only with one. */
  secretsEncryptionKey?: Buffer[];
  /** Console and appeal page settings (AppDeps.settings); appeal links use a test secret by default. */
  console?: Partial<AppDeps['settings']>;
}

export interface Gateway {
  url: string;
  db: Db;
  topics: Topics;
  tenants: TenantStore;
  kafka: Kafka;
  members: MemberStore;
  /** A fresh tenant and one of its keys. */
  newTenant(): Promise<{ tenantId: string; key: string; keyId: string }>;
  /** A console member of a tenant, with a known password. */
  newMember(tenantId: string, role?: MemberRole): Promise<{ id: string; email: string; password: string }>;
  request(
    method: string,
    path: string,
    /** `body`: a string or bytes as they are, anything else as JSON. */
    options?: { key?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<Reply>;
  /** Reads every message of a topic from the start until `count` arrived. */
  readTopic(topic: string, count: number): Promise<KafkaMessage[]>;
  logText(): string;
  close(): Promise<void>;
}

export interface Reply {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON of any response shape
}

/**
 * Webhook hosts at registration without DNS (test machines may have none): `localhost` is loopback, names under
 * `internal.test` resolve to a private address, names under `missing.test` do not exist, any other name is public.
 */
const testResolve: ResolveHost = (hostname) => {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost') return Promise.resolve([{ address: '127.0.0.1' }, { address: '::1' }]);
  if (name.endsWith('internal.test')) return Promise.resolve([{ address: '10.0.0.7' }]);
  if (name.endsWith('missing.test'))
    return Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));
  return Promise.resolve([{ address: '93.184.215.14' }]);
};

/** The gateway's admin CLI (built dist) on this run's store, in the database `dbName`. */
export function adminCli(dbName: string): {
  /** Runs it with `args`; rejects when it exits with an error (the rejection carries its stderr). */
  exec: (...args: string[]) => Promise<{ stdout: string; stderr: string }>;
  /** Runs it with `args` and parses the JSON it prints. */
  json: (...args: string[]) => Promise<Record<string, unknown> & Array<Record<string, unknown>>>;
} {
  const env = { ...process.env, MONGO_URL: testServers().mongoUrl, MONGO_DB: dbName };
  const cli = path.join(ROOT, 'gateway', 'dist', 'admin', 'cli.js');
  const exec = (...args: string[]) => execFileAsync(process.execPath, [cli, ...args], { env });
  return {
    exec,
    json: async (...args) =>
      JSON.parse((await exec(...args)).stdout) as Record<string, unknown> & Array<Record<string, unknown>>,
  };
}

/** A local port nothing listens on. */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Built gateway processes on a database of their own (`dbName`) and one topic prefix, as replicas of one deployment,
 * with a client on that database for the tests' checks (`db`). `close` stops them all, drops the database and closes
 * the client.
 */
export class GatewayProcesses {
  readonly dbName: string;
  private readonly topicPrefix = `${uniqueName('t')}.`;
  private readonly client = new MongoClient(testServers().mongoUrl);
  private readonly started: ServiceProcess[] = [];

  constructor(name: string) {
    this.dbName = uniqueName(name);
  }

  get db(): Db {
    return this.client.db(this.dbName);
  }

  /** Starts one, HTTP on port 0, calling the moderator at `moderatorAddress`; `env` adds or overrides. */
  spawn(moderatorAddress: string, env: Record<string, string> = {}): ServiceProcess {
    const gateway = spawnGateway({ dbName: this.dbName, topicPrefix: this.topicPrefix }, moderatorAddress, env);
    this.started.push(gateway);
    return gateway;
  }

  async close(): Promise<void> {
    await Promise.all(this.started.map((gateway) => gateway.stop()));
    await this.db.dropDatabase();
    await this.client.close();
  }
}

/** The gateway, composed as in main.ts, in process on port 0 against the real servers. */
export async function startGateway(options: GatewayOptions = {}): Promise<Gateway> {
  const servers = testServers();
  let logs = '';
  const log = pino(
    { level: 'debug' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        logs += chunk.toString();
        done();
      },
    }),
  );
  const mongo = new MongoClient(servers.mongoUrl, { serverSelectionTimeoutMS: 5000 });
  await mongo.connect();
  try {
    return await compose(options, servers, mongo, log, () => logs);
  } catch (err) {
    await mongo.close();
    throw err;
  }
}

async function compose(
  options: GatewayOptions,
  servers: ReturnType<typeof testServers>,
  mongo: MongoClient,
  log: pino.Logger,
  logText: () => string,
): Promise<Gateway> {
  const db = mongo.db(options.dbName ?? uniqueName('gw'));
  const brokers = options.kafkaBrokers ?? servers.kafkaBrokers;
  const fastFail = options.kafkaBrokers !== undefined;
  const kafka = new Kafka({
    clientId: 'gateway-test',
    brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: fastFail ? 300 : 3000,
    requestTimeout: fastFail ? 500 : 10000,
    retry: fastFail ? { retries: 1, initialRetryTime: 100, maxRetryTime: 200 } : { retries: 3 },
  });
  const topics = topicNames(options.topicPrefix ?? `${uniqueName('t')}.`);
  if (options.createTopics ?? !fastFail)
    await ensureTopics(kafka, [topics.ingest, topics.webhookCommands, topics.backtests], 3);
  const commands = new CommandProducer(
    commandProducers(kafka),
    { batchMax: 100, lingerMs: 2, sendTimeoutMs: options.kafkaSendTimeoutMs ?? 10000 },
    log,
  );
  const grpcClient = createModerationClient(
    options.moderatorAddress ?? `127.0.0.1:${await closedPort()}`,
    options.moderatorToken ?? grpcToken(),
  );
  // Confirmed versions are stamped as such for as long as the key cache's time to live below.
  const versions = new TenantVersions({ confirmedForMs: 200 });
  const moderator = new ModeratorClient(
    grpcClient,
    { moderateMs: options.moderateTimeoutMs ?? 5000, defaultMs: 5000 },
    versions,
  );
  const tenants = new TenantStore(db);
  await tenants.ensureIndexes();
  const members = new MemberStore(db);
  await members.ensureIndexes();
  // A short key cache: each configuration change waits it out before answering (see ConfigVersionStore).
  const authenticator = new ApiKeyAuthenticator(tenants, { ttlMs: 200, maxEntries: 1000, versions });
  const rateLimiter = new SharedRateLimiter(new RateLimitStore(db), log, {
    instanceId: uniqueName('gw'),
    syncIntervalMs: 250,
  });
  rateLimiter.start();
  const app = createApp({
    log,
    db,
    authenticator,
    versions,
    moderator,
    commands,
    topics,
    rateLimiter,
    settings: {
      // The configuration's defaults, as a deployment that sets none of these variables gets them (the required
      // variables are there for the schema: only the app settings are read).
      ...appSettings(
        loadConfig({
          MONGO_URL: servers.mongoUrl,
          KAFKA_BROKERS: brokers.join(','),
          MODERATOR_ADDRESS: 'unused:1',
          MODERATOR_GRPC_TOKEN: grpcToken(),
        }),
      ),
      bodyLimitBytes: options.bodyLimitBytes ?? 64 * 1024,
      rateLimitPoints: options.rateLimitPoints ?? 0,
      rateLimitWindowSeconds: options.rateLimitWindowSeconds ?? 60,
      trustProxy: false,
      // Tests run their webhook receivers on this machine.
      webhookAllowedCidrs: options.webhookAllowedCidrs ?? ['127.0.0.0/8', '::1/128'],
      webhookMaxEndpointsPerTenant: options.webhookMaxEndpointsPerTenant ?? 10,
      promptRulesEnabled: options.promptRulesEnabled ?? false,
      appealTokenSecret: 'test-appeal-secret-of-at-least-32-characters',
      ...(options.secretsEncryptionKey ? { secretsEncryptionKey: options.secretsEncryptionKey } : {}),
      ...options.console,
    },
    resolveHost: options.resolveHost ?? testResolve,
  });
  const handle = app.callback();
  const server = http.createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const readers = new TopicReaders(kafka);

  return {
    url,
    db,
    topics,
    tenants,
    kafka,
    members,
    async newMember(tenantId, role = 'moderator') {
      const email = `${uniqueName('m')}@example.com`;
      const password = `pw-${uniqueName('p')}`;
      const doc = await members.createMember({ tenantId, email, role, passwordHash: await hashPassword(password) });
      return { id: doc._id, email, password };
    },
    async newTenant() {
      const tenant = await tenants.createTenant(uniqueName('tenant'));
      const { doc, key } = await tenants.createKey(tenant._id);
      return { tenantId: tenant._id, key, keyId: doc._id };
    },
    async request(method, path, { key, body, headers = {} } = {}) {
      const response = await fetch(url + path, {
        method,
        headers: {
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        body:
          body === undefined
            ? undefined
            : typeof body === 'string' || body instanceof Uint8Array
              ? (body as string | Uint8Array<ArrayBuffer>)
              : JSON.stringify(body),
      });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        // not JSON: left as text for the assertion to show
      }
      return { status: response.status, headers: response.headers, body: parsed };
    },
    async readTopic(topic, count) {
      const messages = await readers.collect(topic);
      await waitFor(() => messages.length >= count, { timeoutMs: 30000, what: `${count} messages on ${topic}` });
      return messages;
    },
    logText,
    async close() {
      await readers.disconnect();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await commands.drain();
      await commands.disconnect().catch(() => undefined);
      await rateLimiter.stop();
      grpcClient.close();
      await db.dropDatabase().catch(() => undefined);
      await mongo.close();
    },
  };
}

/** A record the API accepts, for the tests of everything around it. */
export const sampleRecord = { clientId: 'c1', name: 'Post', entity: 'post', content: { text: 'hello' } };

/**
 * The gateway of the HTTP edge tests, with a tenant: bodies up to 2 KiB, so that size limits are cheap to reach, and
 * no rate limit.
 */
export const startEdgeGateway = () => startGatewayWithTenant({ bodyLimitBytes: 2048, rateLimitPoints: 0 });

/** A gateway in process and a tenant of it, for a file whose tests share them (close the gateway after them). */
async function startGatewayWithTenant(
  options: GatewayOptions = {},
): Promise<{ gw: Gateway; tenantId: string; key: string }> {
  const gw = await startGateway(options);
  return { gw, ...(await gw.newTenant()) };
}

/** A moderator process and the gateway in process in front of it (see startModeratorStack). */
export interface ModeratorStack {
  moderator: ServiceProcess;
  gw: Gateway;
  /** The database and topic prefix they share, for another process or gateway on the same stack. */
  names: { dbName: string; topicPrefix: string };
  /**
   * Stops the moderator with `signal` and spawns another with the same environment on the same store and topics (give
   * it a KAFKA_GROUP_ID to join the same group). The gateway keeps calling the first one's address.
   */
  replaceModerator(signal: NodeJS.Signals): Promise<void>;
  /** Closes the gateway, then stops the moderator. */
  close(): Promise<void>;
}

/**
 * The moderator as a process (with `moderatorEnv`), on a database and topics of its own named after `name`, and the
 * gateway in process in front of it (with `gateway`'s options).
 */
export async function startModeratorStack(options: {
  name: string;
  moderatorEnv?: Record<string, string>;
  gateway?: GatewayOptions;
}): Promise<ModeratorStack> {
  const names = { dbName: uniqueName(options.name), topicPrefix: `${uniqueName('t')}.` };
  let moderator = spawnModerator(names, options.moderatorEnv);
  let gw: Gateway;
  try {
    gw = await startGateway({ moderatorAddress: await grpcAddressOf(moderator), ...names, ...options.gateway });
  } catch (err) {
    await moderator.stop();
    throw err;
  }
  return {
    get moderator() {
      return moderator;
    },
    gw,
    names,
    async replaceModerator(signal) {
      await moderator.stop(signal);
      moderator = spawnModerator(names, options.moderatorEnv);
    },
    async close() {
      await gw.close();
      await moderator.stop();
    },
  };
}

/** The real stack of a gateway test (see startServiceStack). */
export interface ServiceStack {
  moderator: ServiceProcess;
  notifier: ServiceProcess;
  gw: Gateway;
  receiver: Receiver;
  /** Closes the receiver and the gateway, then stops the services. */
  close(): Promise<void>;
}

/**
 * The moderator and the notifier as processes, on a database and topics of their own (named after `name`), the
 * gateway in process in front of them, the notifier ready, and a webhook receiver on 127.0.0.1. `notifierEnv` is
 * given the gateway (the notifier links to its pages).
 */
export async function startServiceStack(options: {
  name: string;
  moderatorEnv?: Record<string, string>;
  notifierEnv?: (gw: Gateway) => Record<string, string>;
  /** How long the notifier may take to be ready, milliseconds. Default 60 s. */
  readyMs?: number;
}): Promise<ServiceStack> {
  const stack = { dbName: uniqueName(options.name), topicPrefix: `${uniqueName('t')}.` };
  const moderator = spawnModerator(stack, options.moderatorEnv);
  const gw = await startGateway({ moderatorAddress: await grpcAddressOf(moderator), ...stack });
  const notifier = spawnNotifier(stack, options.notifierEnv?.(gw));
  await waitFor(() => notifier.output().includes('notifier ready'), {
    timeoutMs: options.readyMs ?? 60_000,
    what: 'the notifier',
  });
  const receiver = await startReceiver();
  return {
    moderator,
    notifier,
    gw,
    receiver,
    async close() {
      await receiver.close();
      await gw.close();
      await Promise.all([moderator.stop(), notifier.stop()]);
    },
  };
}

/** What a notifier needs to send emails through the SMTP server at `smtpPort` with links to the gateway's pages. */
export function emailEnv(smtpPort: number, gw: Gateway, appealSecret: string): Record<string, string> {
  return {
    SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
    EMAIL_FROM: 'Trust <no-reply@vigil.test>',
    EMAIL_TIMEOUT_MS: '5000',
    EMAIL_POLL_MS: '100',
    APPEAL_TOKEN_SECRET: appealSecret,
    GATEWAY_PUBLIC_URL: gw.url,
  };
}
