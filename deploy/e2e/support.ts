import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { SMTPServer } from 'smtp-server';
import { ROOT } from '../test-support';

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
