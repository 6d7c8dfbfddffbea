import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { MongoClient } from 'mongodb';
import { SMTPServer } from 'smtp-server';
import { ROOT, spawnService, testServers, uniqueName, type ServiceProcess } from '../test-support';

const run = promisify(execFile);

/** Creates a tenant and an API key with the admin CLI, as an operator would. Returns the key. */
export async function createTenantKey(env: Record<string, string>, tenant: string): Promise<string> {
  const cli = path.join(ROOT, 'gateway', 'dist', 'admin', 'cli.js');
  const options = { env: { ...process.env, ...env } };
  await run(process.execPath, [cli, 'tenant', 'create', tenant], options);
  const { stdout } = await run(process.execPath, [cli, 'key', 'create', tenant], options);
  const key = /vgl_[0-9a-f]+/.exec(stdout)?.[0];
  if (!key) throw new Error('the admin CLI printed no key');
  return key;
}

export interface ReceivedWebhook {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** A webhook receiver on 127.0.0.1:0 that records every request and answers with `status()`. */
export async function startReceiver(status: () => number = () => 204): Promise<{
  url: string;
  received: ReceivedWebhook[];
  close: () => Promise<void>;
}> {
  const received: ReceivedWebhook[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const code = status();
      if (code < 300) received.push({ headers: req.headers, body, at: Date.now() });
      res.writeHead(code).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface ReceivedMail {
  /** The envelope's recipients. */
  to: string[];
  at: number;
}

/**
 * An SMTP server on 127.0.0.1:0 that accepts every message and records its recipients (not its content), and the codes
 * of the connection errors it saw.
 */
export async function startMailReceiver(): Promise<{
  url: string;
  received: ReceivedMail[];
  errors: string[];
  close: () => Promise<void>;
}> {
  const received: ReceivedMail[] = [];
  const errors: string[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      stream.on('end', () => {
        received.push({ to: session.envelope.rcptTo.map((rcpt) => rcpt.address), at: Date.now() });
        callback();
      });
      stream.resume();
    },
  });
  // A client whose connection resets in the middle of a message (a notifier stopped or killed while sending) makes
  // smtp-server emit 'error' on the server: without a listener that is an uncaught `read ECONNRESET` in the test's
  // process, which fails the run even after its checks passed. The sender retries; the receiver only records it.
  server.on('error', (err: Error & { code?: string }) => errors.push(err.code ?? err.message));
  const port = await new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.server.address() as AddressInfo).port)),
  );
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    errors,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type ServiceName = 'gateway' | 'moderator' | 'notifier';

/**
 * One end-to-end test's stack of service processes: a database and a topic prefix no other test uses, the environment
 * every service of it shares (`common`: the run's store and brokers unless `use` points them elsewhere, loopback
 * receivers allowed), the processes it started, and what else it opened (receivers, servers). `close` stops the
 * services, closes the rest and drops the database.
 */
export class E2eStack {
  readonly db: string;
  readonly prefix: string;
  /** A client of the run's store itself (not of a relay the services may go through), for the test's checks. */
  readonly mongo: MongoClient;
  readonly common: Record<string, string>;
  /** Every process started, with its name and when it started (for the evidence of a failure). */
  readonly started: Array<{ name: ServiceName; service: ServiceProcess; startedAt: number }> = [];
  private readonly closers: Array<() => Promise<unknown>> = [];

  constructor(name: string) {
    const servers = testServers();
    this.db = uniqueName(`e2e_${name}`);
    this.prefix = `${uniqueName(name)}.`;
    this.mongo = new MongoClient(servers.mongoUrl);
    this.common = {
      MONGO_URL: servers.mongoUrl,
      MONGO_DB: this.db,
      KAFKA_BROKERS: servers.kafkaBrokers.join(','),
      KAFKA_TOPIC_PREFIX: this.prefix,
      ADMIN_PORT: '0',
      LOG_LEVEL: 'info',
      // The receivers run on this machine: registration (gateway) and delivery (notifier) must both allow them.
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
    };
  }

  /** Changes what every service started from now on shares (a relay in front of the store, other brokers). */
  use(env: Record<string, string>): this {
    Object.assign(this.common, env);
    return this;
  }

  /** Spawns a built service with the common environment and `env`; it is stopped at `close`. */
  start(name: ServiceName, env: Record<string, string> = {}): ServiceProcess {
    const service = spawnService(name, { ...this.common, ...env });
    this.started.push({ name, service, startedAt: Date.now() });
    return service;
  }

  /** The processes still running. */
  running(): ServiceProcess[] {
    return this.started
      .map(({ service }) => service)
      .filter(({ child }) => child.exitCode === null && child.signalCode === null);
  }

  /** Keeps `closeable` until `close`, which closes it after the services stopped; returns it. */
  add<T extends { close(): Promise<unknown> }>(closeable: T): T {
    this.closers.push(() => closeable.close());
    return closeable;
  }

  /** A webhook receiver (startReceiver), closed at `close`. */
  async receiver(status?: () => number): Promise<Receiver> {
    return this.add(await startReceiver(status));
  }

  /** An SMTP receiver (startMailReceiver), closed at `close`. */
  async mailReceiver(): Promise<MailReceiver> {
    return this.add(await startMailReceiver());
  }

  /** A tenant and its API key, made with the admin CLI against the run's store. */
  newTenant(tenant = uniqueName('tenant')): Promise<string> {
    return createTenantKey({ ...this.common, MONGO_URL: testServers().mongoUrl }, tenant);
  }

  /** Stops every service (SIGTERM), closes what was added, drops the database and closes the client. */
  async close(): Promise<void> {
    await Promise.all(this.started.map(({ service }) => service.stop('SIGTERM')));
    for (const close of this.closers.reverse()) await close();
    await this.mongo
      .db(this.db)
      .dropDatabase()
      .catch(() => undefined);
    await this.mongo.close();
  }
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
export type MailReceiver = Awaited<ReturnType<typeof startMailReceiver>>;
