import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';

export interface AdminServer {
  port: number;
  /** Readiness answers 503 from now on (first shutdown phase). */
  drain(): void;
  close(): Promise<void>;
}

/**
 * `/livez` (the process answers, no dependency checks), `/readyz` (every check passes and not draining),
 * `/metrics` (Prometheus text format).
 */
export async function startAdminServer(options: {
  port: number;
  host?: string;
  registry: Registry;
  readiness: () => Promise<boolean>;
  log: Logger;
}): Promise<AdminServer> {
  let draining = false;
  const server = http.createServer((req, res) => {
    const send = (status: number, body: string, type = 'text/plain; charset=utf-8') => {
      res.writeHead(status, { 'content-type': type }).end(body);
    };
    const route = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET') return send(405, 'method not allowed\n');
    if (route === '/livez') return send(200, 'ok\n');
    if (route === '/readyz') {
      if (draining) return send(503, 'draining\n');
      options.readiness().then(
        (ready) => send(ready ? 200 : 503, ready ? 'ok\n' : 'not ready\n'),
        () => send(503, 'not ready\n'),
      );
      return;
    }
    if (route === '/metrics') {
      options.registry.metrics().then(
        (text) => send(200, text, options.registry.contentType),
        (err: unknown) => {
          options.log.error({ err }, 'metrics collection failed');
          send(500, 'metrics unavailable\n');
        },
      );
      return;
    }
    send(404, 'not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '0.0.0.0', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  options.log.info({ port }, 'admin server listening');
  return {
    port,
    drain: () => {
      draining = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
