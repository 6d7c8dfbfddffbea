import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { adminPortOf, loggedPort, uniqueName, waitFor, type ServiceProcess } from '../../../deploy/test-support';
import { adminCli, GatewayProcesses, startGateway, type Gateway } from './harness';

/**
 * A moderator address that takes connections and never answers: gRPC's channel stays CONNECTING, as for a pod that
 * hangs or an address that drops packets, where a call would wait for its deadline.
 */
async function silentServer(): Promise<{ address: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const record = (clientId: string) => ({ clientId, name: 'A post', entity: 'post', content: { text: 'hello' } });

describe('the gateway process with no moderator answering', () => {
  const gateways = new GatewayProcesses('gwdown');
  let gateway: ServiceProcess;
  let silent: Awaited<ReturnType<typeof silentServer>>;

  beforeAll(async () => {
    silent = await silentServer();
    gateway = gateways.spawn(silent.address, {
      ADMIN_HOST: '127.0.0.1',
      // A call that waited for its deadline would take this long: the answers below must come well before.
      MODERATE_TIMEOUT_MS: '60000',
      GRPC_TIMEOUT_MS: '60000',
    });
  });
  afterAll(async () => {
    await gateways.close();
    await silent.close();
  });

  it('becomes ready, accepts ingests, and answers /moderate and moderator reads 503 unavailable at once', async () => {
    const adminPort = await adminPortOf(gateway);
    await waitFor(async () => (await fetch(`http://127.0.0.1:${adminPort}/readyz`)).status === 200, {
      timeoutMs: 30000,
      what: 'the gateway to be ready without a moderator',
    });

    const cli = adminCli(gateways.dbName).json;
    const name = uniqueName('acme');
    await cli('tenant', 'create', name);
    const key = (await cli('key', 'create', name)).key as string;
    const port = await loggedPort(gateway, 'http server listening');
    const call = (method: string, route: string, body?: unknown) =>
      fetch(`http://127.0.0.1:${port}/api/v1${route}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });

    const ingest = await call('POST', '/ingest', record('post-1'));
    expect(ingest.status).toBe(202);

    for (const [method, route, body] of [
      ['POST', '/moderate', record('post-2')],
      ['GET', '/records', undefined],
    ] as const) {
      const started = Date.now();
      const reply = await call(method, route, body);
      const elapsed = Date.now() - started;
      expect(reply.status).toBe(503);
      expect(((await reply.json()) as { error: { code: string } }).error.code).toBe('unavailable');
      // MODERATOR_CONNECT_WAIT_MS (1 s) and the request's own work; far from the 60 s deadline.
      expect(elapsed).toBeLessThan(15000);
    }
    expect((await fetch(`http://127.0.0.1:${adminPort}/readyz`)).status).toBe(200);

    // The address now refuses connections, and the channel fails outright (TRANSIENT_FAILURE): still ready.
    await silent.close();
    const refused = await call('POST', '/moderate', record('post-3'));
    expect(refused.status).toBe(503);
    expect((await fetch(`http://127.0.0.1:${adminPort}/readyz`)).status).toBe(200);
    expect((await call('POST', '/ingest', record('post-4'))).status).toBe(202);
  });
});

describe('moderator calls in process', () => {
  let gw: Gateway;
  let silent: Awaited<ReturnType<typeof silentServer>>;
  let key: string;

  afterEach(async () => {
    await gw?.close();
    await silent?.close();
  });

  it.each([
    ['a closed port', undefined],
    ['an address that never answers', 'silent'],
  ])('answer 503 unavailable, not a timeout, when the moderator is %s', async (_name, kind) => {
    silent = await silentServer();
    gw = await startGateway({
      moderateTimeoutMs: 60000,
      ...(kind === 'silent' ? { moderatorAddress: silent.address } : {}),
    });
    ({ key } = await gw.newTenant());
    const started = Date.now();
    const reply = await gw.request('POST', '/api/v1/moderate', { key, body: record('post-1') });
    expect(reply.status).toBe(503);
    expect(reply.body.error.code).toBe('unavailable');
    expect(Date.now() - started).toBeLessThan(15000);
  });
});
