import net from 'node:net';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { loadModerationPackage, TenantVersions } from '@vigil/proto';
import { waitFor } from '../../../deploy/test-support';
import { UnavailableError } from '../../src/errors';
import { createModerationClient, ModeratorClient } from '../../src/grpc/moderator-client';

interface FakeModerator {
  /** The address the gateway dials: a TCP relay to the gRPC server, which `die` cuts. */
  port: number;
  calls: string[];
  /** Resets every connection and refuses new ones, as the host does when the process is killed. */
  die(): void;
  close(): Promise<void>;
}

/** A TCP relay to 127.0.0.1:`port` whose connections can be cut at once. */
async function relayTo(port: number): Promise<{ port: number; cut: () => void; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  };
  const relay = net.createServer((incoming) => {
    const outgoing = net.connect(port, '127.0.0.1');
    track(incoming);
    track(outgoing);
    incoming.pipe(outgoing).pipe(incoming);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const close = () => new Promise<void>((resolve) => (relay.listening ? relay.close(() => resolve()) : resolve()));
  return {
    port: (relay.address() as AddressInfo).port,
    cut: () => {
      void close();
      for (const socket of sockets) socket.resetAndDestroy();
    },
    close,
  };
}

/**
 * A moderator answering Moderate and GetRecord. When `dropFirst` is armed, the first call to reach either of them
 * kills the one it reached before it answers, as when that process dies mid-call.
 */
async function startFake(name: string, dropFirst: { armed: boolean }): Promise<FakeModerator> {
  const { ModerationService } = loadModerationPackage().vigil.moderation.v1;
  const server = new grpc.Server();
  // Set once the relay listens, before the gateway can call.
  const link: { relay?: Awaited<ReturnType<typeof relayTo>> } = {};
  const calls: string[] = [];
  const handle = (method: string, answer: () => object) => (_call: unknown, callback: grpc.sendUnaryData<object>) => {
    calls.push(method);
    if (dropFirst.armed) {
      dropFirst.armed = false;
      link.relay?.cut();
      return;
    }
    callback(null, answer());
  };
  server.addService(ModerationService.service, {
    Moderate: handle('Moderate', () => ({
      recordId: 'rec_1',
      status: 'Compliant',
      moderationId: `mod_${name}`,
      flagged: false,
      reasons: [],
      rules: [],
      testMode: false,
    })),
    GetRecord: handle('GetRecord', () => ({
      id: 'rec_1',
      clientId: 'c',
      entity: 'post',
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
      version: 1,
    })),
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    ),
  );
  const relay = await relayTo(port);
  link.relay = relay;
  const { cut, close } = relay;
  return {
    port: relay.port,
    calls,
    die: cut,
    close: async () => {
      cut();
      await close();
      server.forceShutdown();
    },
  };
}

const moderateRequest = (passthrough: boolean) =>
  ({ tenantId: 'ten_1', clientId: 'c', name: 'n', entity: 'post', content: { text: 'hi' }, passthrough }) as const;

describe("the gateway's moderator channel over two moderators", () => {
  let a: FakeModerator;
  let b: FakeModerator;
  let client: ReturnType<typeof createModerationClient>;
  let moderator: ModeratorClient;

  const dropFirst = { armed: false };

  beforeEach(async () => {
    dropFirst.armed = false;
    [a, b] = await Promise.all([startFake('a', dropFirst), startFake('b', dropFirst)]);
    // Two addresses for one target, as a headless Service's name resolves to every pod.
    client = createModerationClient(`ipv4:127.0.0.1:${a.port},127.0.0.1:${b.port}`, 'x'.repeat(32));
    moderator = new ModeratorClient(client, { moderateMs: 10000, defaultMs: 10000 }, new TenantVersions());
  });
  afterEach(async () => {
    client.close();
    await Promise.all([a.close(), b.close()]);
  });

  const calls = () => a.calls.length + b.calls.length;

  it('spreads calls over every moderator, round robin', async () => {
    for (let i = 0; i < 20; i += 1) await moderator.call('moderate', moderateRequest(false));
    // round_robin starts on whichever connects first; then it alternates.
    expect(a.calls.length).toBeGreaterThanOrEqual(5);
    expect(b.calls.length).toBeGreaterThanOrEqual(5);
  });

  it('skips a moderator that went away', async () => {
    await moderator.call('moderate', moderateRequest(false));
    a.die();
    // A call made before the channel saw the connection close may still fail; from then on every call goes to b.
    const sixInARow = async () => {
      const answers: string[] = [];
      for (let i = 0; i < 6; i += 1)
        answers.push((await moderator.call('moderate', moderateRequest(false))).moderationId);
      return answers.every((answer) => answer === 'mod_b');
    };
    await waitFor(sixInARow, { timeoutMs: 10000, what: 'six calls in a row answered by b' });
    const before = a.calls.length;
    expect(await sixInARow()).toBe(true);
    expect(a.calls.length).toBe(before);
  });

  it.each([
    ['a read', () => moderator.call('getRecord', { tenantId: 'ten_1', recordId: 'rec_1' })],
    ['a passthrough Moderate', () => moderator.call('moderate', moderateRequest(true))],
    [
      'a stored Moderate with its moderation id (applied once)',
      () => moderator.call('moderate', { ...moderateRequest(false), moderationId: 'mod_01JC0000000000000000000000' }),
    ],
  ])('sends %s again to the other moderator when the first dies mid-call', async (_name, call) => {
    await moderator.call('moderate', moderateRequest(true));
    dropFirst.armed = true;
    await expect(call()).resolves.toBeDefined();
    expect(calls()).toBe(3);
  });

  it('does not send a stored Moderate without a moderation id again: the moderator may have applied it', async () => {
    await moderator.call('moderate', moderateRequest(true));
    dropFirst.armed = true;
    await expect(moderator.call('moderate', moderateRequest(false))).rejects.toBeInstanceOf(UnavailableError);
    expect(calls()).toBe(2);
  });
});
