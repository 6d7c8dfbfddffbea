import net from 'node:net';
import { freePortSync } from './ports';
import { E2eStack } from './support';
import { adminPortOf, loggedPort, testServers, waitFor, type ServiceProcess } from '../test-support';

// Every service started before its store answers (a node restart, a store still starting): each keeps trying, and
// serves once the store answers, without a restart. The store is reached through a TCP relay that refuses connections
// until each service has logged a failed connect, then forwards to the run's store.
const { mongoUrl } = testServers();

describe('services started before the store answers', () => {
  const stack = new E2eStack('store_late');
  const { prefix } = stack;
  const relayPort = freePortSync();
  const grpcPort = freePortSync();
  const httpPort = freePortSync();
  const sockets = new Set<net.Socket>();
  const relay = net.createServer((client) => {
    const store = new URL(mongoUrl);
    const upstream = net.connect(Number(store.port), store.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });

  afterAll(async () => {
    await stack.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => relay.close(resolve));
  });

  it('connects once the store answers and serves', async () => {
    stack.use({ MONGO_URL: `mongodb://127.0.0.1:${relayPort}/` });
    const moderator = stack.start('moderator', {
      GRPC_HOST: '127.0.0.1',
      GRPC_PORT: String(grpcPort),
      KAFKA_GROUP_ID: `${prefix}moderator`,
    });
    const notifier = stack.start('notifier', { KAFKA_GROUP_ID: `${prefix}notifier` });
    const gateway = stack.start('gateway', {
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(httpPort),
      MODERATOR_ADDRESS: `127.0.0.1:${grpcPort}`,
    });

    // Each has failed to connect at least once (a server selection timeout) while the relay refused.
    const failedConnect = (service: ServiceProcess) =>
      service.logs().some((line) => JSON.stringify(line).includes('MongoServerSelectionError'));
    await waitFor(() => [moderator, notifier, gateway].every(failedConnect), {
      timeoutMs: 90_000,
      what: 'a failed store connection in every service',
    });
    await new Promise<void>((resolve) => relay.listen(relayPort, '127.0.0.1', resolve));

    // Then each gets ready, and a tenant's request goes through the gateway, the moderator and their store.
    await loggedPort(moderator, 'grpc server listening', 'port', 90_000).catch((err: Error) => {
      throw new Error(`${err.message}; its last output: ${moderator.output().slice(-3000)}`);
    });
    for (const service of [moderator, notifier, gateway]) {
      const admin = await adminPortOf(service);
      await waitFor(
        async () => (await fetch(`http://127.0.0.1:${admin}/readyz`).catch(() => undefined))?.status === 200,
        { timeoutMs: 90_000, what: 'the service ready' },
      );
    }
    const key = await stack.newTenant();
    const answer = await waitFor(
      async () => {
        const response = await fetch(`http://127.0.0.1:${httpPort}/api/v1/moderate`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ clientId: 'late-1', name: 'post', entity: 'post', content: { text: 'hello there' } }),
        });
        return response.status === 200 ? ((await response.json()) as { status: string }) : undefined;
      },
      { timeoutMs: 30_000, what: 'a /moderate call answered' },
    );
    expect(answer.status).toBe('Compliant');
  });
});
