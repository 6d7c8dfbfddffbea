// Helpers for integration and end-to-end tests: real servers, unique names, waiting on conditions.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Consumer, Kafka, KafkaMessage } from 'kafkajs';
import { MongoClient, type Db } from 'mongodb';
import sharp from 'sharp';
import { serviceArgs } from '../local/service-command';

export const ROOT = path.resolve(__dirname, '..', '..');

export interface TestServers {
  kafkaBrokers: string[];
  mongoUrl: string;
}

/** Addresses of the servers started for this run (see deploy/local/servers.js). */
export function testServers(): TestServers {
  const kafka = process.env.KAFKA_BROKERS;
  const mongo = process.env.MONGO_URL;
  if (!kafka || !mongo) throw new Error('KAFKA_BROKERS and MONGO_URL must be set; run the tests with `npm test`');
  return { kafkaBrokers: kafka.split(','), mongoUrl: mongo };
}

/** A name no other test file or run uses: for topics, consumer groups, databases. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
}

/** A database of its own on the test store, for a test of a store class; `drop` deletes it and closes the client. */
export function scratchDb(prefix: string): { db: Db; drop(): Promise<void> } {
  const client = new MongoClient(testServers().mongoUrl);
  const db = client.db(uniqueName(prefix), { ignoreUndefined: true });
  return {
    db,
    async drop() {
      await db.dropDatabase().catch(() => undefined);
      await client.close();
    },
  };
}

/** Polls `predicate` until it returns a truthy value, which is returned; throws after `timeoutMs`. */
export async function waitFor<T>(
  predicate: () => T | Promise<T>,
  {
    timeoutMs = 20000,
    intervalMs = 100,
    what = 'condition',
  }: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await predicate();
      if (value) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const suffix = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${suffix}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

let token: string | undefined;

/**
 * The moderator's gRPC token for this test process: random, made once, handed to every moderator and gateway a test
 * starts (in process or through `spawnService`), so they agree and nothing else does.
 */
export function grpcToken(): string {
  token ??= randomBytes(32).toString('hex');
  return token;
}

export interface ServiceProcess {
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Parsed JSON log lines. */
  logs(): Array<Record<string, unknown>>;
  /** Resolves with the exit code (or signal) once the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Spawns a built service (`<name>/dist/main.js`) as its own process with `env` added to this one's, and this
 * process's moderator token (`grpcToken()`) unless `env` sets MODERATOR_GRPC_TOKEN.
 */
export function spawnService(name: 'gateway' | 'moderator' | 'notifier', env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, serviceArgs(ROOT, name), {
    env: { ...process.env, LOG_LEVEL: 'info', MODERATOR_GRPC_TOKEN: grpcToken(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let buffer = '';
  child.stdout?.on('data', (chunk: Buffer) => (buffer += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (buffer += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    output: () => buffer,
    logs: () =>
      buffer
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .flatMap((line) => {
          try {
            return [JSON.parse(line) as Record<string, unknown>];
          } catch {
            return [];
          }
        }),
    exited,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 20000);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** Waits until a service's admin server logged the port it listens on, and returns it. */
export async function adminPortOf(service: ServiceProcess, timeoutMs = 30000): Promise<number> {
  return waitFor(
    () => {
      const line = service.logs().find((entry) => entry.msg === 'admin server listening');
      return typeof line?.port === 'number' ? line.port : undefined;
    },
    { timeoutMs, what: 'admin server to listen' },
  );
}

/** Finds the first log line with message `msg` and returns the numeric field `field` from it. */
export async function loggedPort(
  service: ServiceProcess,
  msg: string,
  field = 'port',
  timeoutMs = 30000,
): Promise<number> {
  return waitFor(
    () => {
      const line = service.logs().find((entry) => entry.msg === msg);
      const value = line?.[field];
      return typeof value === 'number' ? value : undefined;
    },
    { timeoutMs, what: `log line "${msg}"` },
  );
}

/** The database and topics of one test's stack: every service the test starts shares them. */
export interface TestStack {
  dbName: string;
  topicPrefix: string;
}

/** What a spawned service needs to reach this run's servers with the stack's database and topics. */
function stackEnv(stack: TestStack): Record<string, string> {
  const servers = testServers();
  return {
    ADMIN_PORT: '0',
    MONGO_URL: servers.mongoUrl,
    MONGO_DB: stack.dbName,
    KAFKA_BROKERS: servers.kafkaBrokers.join(','),
    KAFKA_TOPIC_PREFIX: stack.topicPrefix,
    KAFKA_TOPIC_PARTITIONS: '3',
  };
}

/** Spawns the built moderator for the stack, with its gRPC port picked by the system; `env` adds or overrides. */
export function spawnModerator(stack: TestStack, env: Record<string, string> = {}): ServiceProcess {
  return spawnService('moderator', { ...stackEnv(stack), GRPC_PORT: '0', KAFKA_GROUP_ID: uniqueName('grp'), ...env });
}

/**
 * Spawns the built gateway for the stack, its HTTP port picked by the system, calling the moderator at
 * `moderatorAddress`; `env` adds or overrides.
 */
export function spawnGateway(
  stack: TestStack,
  moderatorAddress: string,
  env: Record<string, string> = {},
): ServiceProcess {
  return spawnService('gateway', { ...stackEnv(stack), HTTP_PORT: '0', MODERATOR_ADDRESS: moderatorAddress, ...env });
}

/** The address of a spawned moderator's gRPC server, once it listens. */
export async function grpcAddressOf(moderator: ServiceProcess): Promise<string> {
  return `127.0.0.1:${await loggedPort(moderator, 'grpc server listening')}`;
}

/** Spawns the built notifier for the stack, allowed to deliver to receivers on loopback; `env` adds or overrides. */
export function spawnNotifier(stack: TestStack, env: Record<string, string> = {}): ServiceProcess {
  return spawnService('notifier', {
    ...stackEnv(stack),
    KAFKA_GROUP_ID: uniqueName('grp'),
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
    ...env,
  });
}

/** Reads topics for a test, each with a consumer group of its own; `disconnect` closes every consumer it opened. */
export class TopicReaders {
  private readonly consumers: Consumer[] = [];

  constructor(private readonly kafka: Kafka) {}

  /** Every message of `topic` from the beginning: the returned array fills as they arrive. */
  async collect(topic: string): Promise<KafkaMessage[]> {
    const seen: KafkaMessage[] = [];
    const consumer = this.kafka.consumer({ groupId: uniqueName('reader') });
    this.consumers.push(consumer);
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: ({ message }) => {
        seen.push(message);
        return Promise.resolve();
      },
    });
    return seen;
  }

  async disconnect(): Promise<void> {
    await Promise.all(this.consumers.splice(0).map((consumer) => consumer.disconnect()));
  }
}

export interface ImageServer {
  /** `http://127.0.0.1:<port>`: every path answers the same image. */
  base: string;
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1 answering every path with one PNG of a solid colour, made with sharp. */
export async function startImageServer(options: {
  width: number;
  height: number;
  background: { r: number; g: number; b: number };
}): Promise<ImageServer> {
  const png = await sharp({ create: { ...options, channels: 3 } })
    .png()
    .toBuffer();
  const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(png));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
