import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePortSync } from './ports';
import { E2eStack, type Receiver, type ServiceName } from './support';
import { loggedPort, ROOT, uniqueName, waitFor } from '../test-support';

// What the API answered holds for the next request (DESIGN §2, §8), with real processes: two gateways, one moderator,
// one notifier, their caches warm. A change applies at once to what follows it, through the gateway that made it and
// through the other one alike (docs/replicas.md): no test here waits after a change's answer.
const run = promisify(execFile);

describe('configuration changes on every replica', () => {
  const stack = new E2eStack('fresh');
  const { db, prefix, mongo, common } = stack;
  const grpcPort = freePortSync();
  const gateways: string[] = [];
  let tenant = '';
  let key = '';

  const start = (name: ServiceName, env: Record<string, string>) => stack.start(name, env);
  const send = async (gateway: number, method: string, route: string, body?: unknown, apiKey = key) =>
    fetch(`${gateways[gateway]}/api/v1${route}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const json = async (res: Response, status: number): Promise<Record<string, unknown>> => {
    const text = await res.text();
    if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
  const receiver = () => stack.receiver();
  const addEndpoint = async (gateway: number, url: string) =>
    ((await json(await send(gateway, 'POST', '/webhook-endpoints', { url }), 201)) as { data: { id: string } }).data.id;
  const ingest = async (gateway: number, clientId: string) =>
    json(
      await send(gateway, 'POST', '/ingest', {
        clientId,
        name: clientId,
        entity: 'post',
        content: { text: `${clientId} says hello` },
      }),
      202,
    );
  const moderate = async (gateway: number, text: string) =>
    String(
      (
        await json(
          await send(gateway, 'POST', '/moderate', {
            clientId: uniqueName('m'),
            name: 'post',
            entity: 'post',
            content: { text },
            passthrough: true,
          }),
          200,
        )
      ).status,
    );
  const setBlocklist = async (gateway: number, words: string[]) =>
    json(
      await send(gateway, 'PUT', '/rules', {
        rules: [{ id: 'words', name: 'Words', strategies: [{ type: 'blocklist', words }] }],
      }),
      200,
    );
  const webhookOf = (r: Receiver, clientId: string) =>
    r.received.find((w) => (JSON.parse(w.body) as { payload: { clientId?: string } }).payload.clientId === clientId);

  beforeAll(async () => {
    const moderator = start('moderator', {
      GRPC_PORT: String(grpcPort),
      KAFKA_GROUP_ID: `${prefix}moderator`,
    });
    await loggedPort(moderator, 'grpc server listening');
    start('notifier', { KAFKA_GROUP_ID: `${prefix}notifier` });
    for (let i = 0; i < 2; i += 1) {
      const gateway = start('gateway', {
        HTTP_PORT: '0',
        MODERATOR_ADDRESS: `127.0.0.1:${grpcPort}`,
        RATE_LIMIT_POINTS: '0',
      });
      gateways.push(`http://127.0.0.1:${await loggedPort(gateway, 'http server listening')}`);
    }
    tenant = uniqueName('tenant');
    key = await stack.newTenant(tenant);
    // Warm every cache on both gateways and in the moderator and notifier: an endpoint, a webhook delivered to it, a
    // moderation through each gateway.
    const warm = await receiver();
    await addEndpoint(0, warm.url);
    await ingest(0, 'warm-0');
    await ingest(1, 'warm-1');
    await waitFor(() => webhookOf(warm, 'warm-0') && webhookOf(warm, 'warm-1'), {
      timeoutMs: 60000,
      what: 'the warm-up webhooks',
    });
    expect(await moderate(0, 'zebra crossing')).toBe('Compliant');
    expect(await moderate(1, 'zebra crossing')).toBe('Compliant');
  }, 180000);

  afterAll(() => stack.close());

  it('judges the next moderation through the same gateway by a rule saved just before', async () => {
    await setBlocklist(0, ['zebra']);
    expect(await moderate(0, 'zebra crossing')).toBe('Flagged');
  });

  it('judges the next moderation through the other gateway by a rule saved just before', async () => {
    const animals = ['giraffe', 'okapi', 'tapir'];
    for (const [i, animal] of animals.entries()) {
      await setBlocklist(i % 2, ['zebra', ...animals.slice(0, i + 1)]);
      expect(await moderate((i + 1) % 2, `${animal} neck`)).toBe('Flagged');
    }
  });

  it('delivers the webhook of a record ingested just after its endpoint was registered', async () => {
    const fresh = await receiver();
    await addEndpoint(0, fresh.url);
    await ingest(0, 'after-register');
    await waitFor(() => webhookOf(fresh, 'after-register'), { timeoutMs: 60000, what: 'the new endpoint webhook' });
  });

  it('delivers the webhook of a record ingested through the other gateway just after its endpoint was registered', async () => {
    // Each gateway's key cache is warm before the change: the ingest right after it is the case a cache would miss.
    for (let i = 0; i < 4; i += 1) {
      const fresh = await receiver();
      await ingest(0, `warm-elsewhere-${i}`);
      await addEndpoint(1, fresh.url);
      await ingest(0, `after-register-elsewhere-${i}`);
      await waitFor(() => webhookOf(fresh, `after-register-elsewhere-${i}`), {
        timeoutMs: 60000,
        what: 'the webhook of the endpoint registered elsewhere',
      });
    }
  });

  it('sends nothing created after an endpoint was disabled to it', async () => {
    const off = await receiver();
    const on = await receiver();
    const offId = await addEndpoint(0, off.url);
    await addEndpoint(0, on.url);
    await ingest(0, 'before-disable');
    await waitFor(() => webhookOf(off, 'before-disable'), { timeoutMs: 60000, what: 'the webhook before disabling' });
    await json(await send(0, 'PATCH', `/webhook-endpoints/${offId}`, { enabled: false }), 200);
    await ingest(0, 'after-disable');
    // Fanned out together: once the enabled endpoint has it, the disabled one would have a delivery too.
    await waitFor(() => webhookOf(on, 'after-disable'), { timeoutMs: 60000, what: 'the enabled endpoint webhook' });
    const deliveries = await mongo.db(db).collection('deliveries').countDocuments({ endpointId: offId });
    expect(deliveries).toBe(1);
    expect(webhookOf(off, 'after-disable')).toBeUndefined();
  });

  it('sends nothing ingested through the other gateway after an endpoint was disabled to it', async () => {
    const off = await receiver();
    const on = await receiver();
    const offId = await addEndpoint(0, off.url);
    await addEndpoint(0, on.url);
    await ingest(1, 'before-disable-elsewhere');
    await waitFor(() => webhookOf(off, 'before-disable-elsewhere'), { timeoutMs: 60000, what: 'the first webhook' });
    await json(await send(0, 'PATCH', `/webhook-endpoints/${offId}`, { enabled: false }), 200);
    await ingest(1, 'after-disable-elsewhere');
    await waitFor(() => webhookOf(on, 'after-disable-elsewhere'), {
      timeoutMs: 60000,
      what: 'the enabled endpoint webhook',
    });
    const deliveries = await mongo.db(db).collection('deliveries').countDocuments({ endpointId: offId });
    expect(deliveries).toBe(1);
    expect(webhookOf(off, 'after-disable-elsewhere')).toBeUndefined();
  });

  it('refuses a revoked key on both gateways once the admin CLI returned', async () => {
    const cli = path.join(ROOT, 'gateway', 'dist', 'admin', 'cli.js');
    const options = { env: { ...process.env, ...common } };
    const created = JSON.parse((await run(process.execPath, [cli, 'key', 'create', tenant], options)).stdout) as {
      id: string;
      key: string;
    };
    for (const gateway of [0, 1])
      expect((await send(gateway, 'GET', '/rules', undefined, created.key)).status).toBe(200);
    await run(process.execPath, [cli, 'key', 'revoke', created.id], options);
    for (const gateway of [0, 1])
      expect((await send(gateway, 'GET', '/rules', undefined, created.key)).status).toBe(401);
  });
});
