import net from 'node:net';
import { WebhookCommand, COLLECTIONS } from '@vigil/proto';
import { DEFAULT_RULES } from '@vigil/proto/rules';
import { waitFor } from '../../../deploy/test-support';
import { startGateway, type Gateway, type Reply } from './harness';

let gw: Gateway;
let alice: { tenantId: string; key: string };
let bob: { tenantId: string; key: string };

beforeAll(async () => {
  gw = await startGateway();
  alice = await gw.newTenant();
  bob = await gw.newTenant();
});
afterAll(async () => {
  await gw.close();
});

/** Creates an endpoint of alice's with these fields: the reply, and the endpoint's id. */
async function aliceEndpoint(body: Record<string, unknown>): Promise<{ created: Reply; id: string }> {
  const created = await gw.request('POST', '/api/v1/webhook-endpoints', { key: alice.key, body });
  return { created, id: created.body.data.id as string };
}

/** A delivery of alice's endpoint that failed, as the notifier stores it. */
async function failedDelivery(deliveryId: string, endpointId: string): Promise<void> {
  await gw.db
    .collection<{ _id: string; [field: string]: unknown }>(COLLECTIONS.deliveries)
    .insertOne({ _id: deliveryId, tenantId: alice.tenantId, endpointId, state: 'failed' });
}

/** What the notifier keeps of alice's endpoint (failing since, disabled at and why). */
async function endpointState(endpointId: string, state: Record<string, unknown>): Promise<void> {
  await gw.db
    .collection<{ _id: string; [field: string]: unknown }>(COLLECTIONS.endpointStates)
    .insertOne({ _id: endpointId, tenantId: alice.tenantId, ...state });
}

describe('webhook endpoints', () => {
  it('creates an endpoint showing its whsec_ secret once, then never again', async () => {
    const created = await gw.request('POST', '/api/v1/webhook-endpoints', {
      key: alice.key,
      body: { url: 'https://hooks.example.com/vigil', events: ['record.flagged'] },
    });
    expect(created.status).toBe(201);
    const secret = created.body.data.secret as string;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(24);
    expect(created.body.data).toMatchObject({
      url: 'https://hooks.example.com/vigil',
      events: ['record.flagged'],
      enabled: true,
    });

    const read = await gw.request('GET', `/api/v1/webhook-endpoints/${created.body.data.id}`, { key: alice.key });
    expect(read.status).toBe(200);
    expect(read.body.data).not.toHaveProperty('secret');
    expect(JSON.stringify(read.body)).not.toContain(secret);
  });

  it.each([
    ['a non-http scheme', { url: 'ftp://example.com/x' }, 'url'],
    ['not a URL', { url: 'hooks' }, 'url'],
    ['an unknown event', { url: 'https://x.example', events: ['record.deleted'] }, 'events.0'],
    ['an unknown field', { url: 'https://x.example', secret: 'mine' }, 'secret'],
  ])('refuses %s with 400 and the path', async (_name, body, path) => {
    const reply = await gw.request('POST', '/api/v1/webhook-endpoints', { key: alice.key, body });
    expect(reply.status).toBe(400);
    expect((reply.body.error.details as Array<{ path: unknown[] }>).map((d) => d.path.join('.'))).toEqual([path]);
  });

  it("keeps tenants apart: another tenant's endpoint is not found, listed, changed or deleted", async () => {
    const { id } = await aliceEndpoint({ url: 'http://hooks.example.com/a' });
    expect((await gw.request('GET', `/api/v1/webhook-endpoints/${id}`, { key: bob.key })).status).toBe(404);
    expect(
      (await gw.request('PATCH', `/api/v1/webhook-endpoints/${id}`, { key: bob.key, body: { enabled: false } })).status,
    ).toBe(404);
    expect(
      (await gw.request('POST', `/api/v1/webhook-endpoints/${id}/rotate-secret`, { key: bob.key, body: {} })).status,
    ).toBe(404);
    expect((await gw.request('GET', `/api/v1/webhook-endpoints/${id}/deliveries`, { key: bob.key })).status).toBe(404);
    expect((await gw.request('DELETE', `/api/v1/webhook-endpoints/${id}`, { key: bob.key })).status).toBe(404);
    const bobs = await gw.request('GET', '/api/v1/webhook-endpoints', { key: bob.key });
    expect(bobs.body).toEqual({ data: [], has_more: false });
    const alices = await gw.request('GET', '/api/v1/webhook-endpoints', { key: alice.key });
    expect((alices.body.data as Array<{ id: string }>).map((e) => e.id)).toContain(id);
    expect((await gw.request('GET', `/api/v1/webhook-endpoints/${id}`, { key: alice.key })).status).toBe(200);
  });

  it('pages endpoints oldest first, and refuses a cursor that is not an endpoint of the tenant with 400', async () => {
    const tenant = await gw.newTenant();
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const created = await gw.request('POST', '/api/v1/webhook-endpoints', {
        key: tenant.key,
        body: { url: `https://hooks.example.com/page/${i}` },
      });
      ids.push(created.body.data.id as string);
    }
    const list = (query: string) => gw.request('GET', `/api/v1/webhook-endpoints?${query}`, { key: tenant.key });
    const first = await list('limit=2');
    expect((first.body.data as Array<{ id: string }>).map((e) => e.id)).toEqual(ids.slice(0, 2));
    expect(first.body.has_more).toBe(true);
    const second = await list(`limit=2&starting_after=${ids[1]}`);
    expect(second.body).toEqual({ data: [expect.objectContaining({ id: ids[2] })], has_more: false });

    const foreign = await gw.request('POST', '/api/v1/webhook-endpoints', {
      key: bob.key,
      body: { url: 'https://hooks.example.com/page/bob' },
    });
    for (const cursor of ['we_nope', foreign.body.data.id as string]) {
      const refused = await list(`starting_after=${cursor}`);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({
        code: 'validation_error',
        details: [expect.objectContaining({ path: ['starting_after'] })],
      });
    }
  });

  it('patches fields, deletes, and shows the notifier state', async () => {
    const { id } = await aliceEndpoint({ url: 'https://hooks.example.com/b' });
    const disabledAt = new Date('2026-01-02T03:04:05.000Z');
    await endpointState(id, { disabledAt, disabledReason: 'gone' });
    const patched = await gw.request('PATCH', `/api/v1/webhook-endpoints/${id}`, {
      key: alice.key,
      body: { description: 'main', events: ['user.banned'] },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({
      description: 'main',
      events: ['user.banned'],
      url: 'https://hooks.example.com/b',
      disabledAt: disabledAt.toISOString(),
      disabledReason: 'gone',
    });
    expect((await gw.request('PATCH', `/api/v1/webhook-endpoints/${id}`, { key: alice.key, body: {} })).status).toBe(
      400,
    );
    expect((await gw.request('DELETE', `/api/v1/webhook-endpoints/${id}`, { key: alice.key })).body).toEqual({
      id,
      deleted: true,
    });
    expect((await gw.request('GET', `/api/v1/webhook-endpoints/${id}`, { key: alice.key })).status).toBe(404);
  });

  it('rotates the secret, keeping the previous one until the overlap ends', async () => {
    const { created, id } = await aliceEndpoint({ url: 'https://hooks.example.com/c' });
    const before = Date.now();
    const rotated = await gw.request('POST', `/api/v1/webhook-endpoints/${id}/rotate-secret`, {
      key: alice.key,
      body: { overlapSeconds: 3600 },
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(created.body.data.secret);
    const doc = await gw.db.collection(COLLECTIONS.webhookEndpoints).findOne({ _id: id as never });
    const secrets = doc!.secrets as Array<{ secret: string; expiresAt?: Date }>;
    expect(secrets.map((s) => s.secret)).toEqual([rotated.body.secret, created.body.data.secret]);
    expect(secrets[0]!.expiresAt).toBeUndefined();
    const expiry = secrets[1]!.expiresAt!.getTime();
    expect(expiry).toBeGreaterThanOrEqual(before + 3600_000 - 1000);
    expect(expiry).toBeLessThanOrEqual(Date.now() + 3600_000 + 1000);
    expect(new Date(rotated.body.previousSecretExpiresAt as string).getTime()).toBe(expiry);
  });

  it('keeps every secret a rotation answered with when rotations and patches of the endpoint run at once', async () => {
    const { id } = await aliceEndpoint({ url: 'https://hooks.example.com/d' });
    const rotate = () =>
      gw.request('POST', `/api/v1/webhook-endpoints/${id}/rotate-secret`, {
        key: alice.key,
        body: { overlapSeconds: 3600 },
      });
    const patch = (i: number) =>
      gw.request('PATCH', `/api/v1/webhook-endpoints/${id}`, { key: alice.key, body: { description: `d${i}` } });
    const replies = await Promise.all(Array.from({ length: 6 }, (_, i) => [rotate(), patch(i)]).flat());
    const answered = replies.filter((reply) => typeof reply.body.secret === 'string').map((r) => r.body.secret);
    expect(replies.every((reply) => reply.status === 200)).toBe(true);
    expect(answered).toHaveLength(6);
    const doc = await gw.db.collection(COLLECTIONS.webhookEndpoints).findOne({ _id: id as never });
    const stored = (doc!.secrets as Array<{ secret: string }>).map((entry) => entry.secret);
    for (const secret of answered) expect(stored).toContain(secret);
    expect(doc!.description).toMatch(/^d\d$/);
  });

  it('lists deliveries newest first for the endpoint only, and queues retry, replay and enable commands', async () => {
    const { id } = await aliceEndpoint({ url: 'https://hooks.example.com/d', enabled: false });
    const deliveries = gw.db.collection<{
      _id: string;
      tenantId: string;
      endpointId: string;
      state: string;
      createdAt: Date;
    }>(COLLECTIONS.deliveries);
    // Delivery ids are digests, unordered in time: the log is ordered by createdAt, newest first.
    const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second));
    await deliveries.insertMany([
      { _id: 'dlv_02', tenantId: alice.tenantId, endpointId: id, state: 'succeeded', createdAt: at(1) },
      { _id: 'dlv_03', tenantId: alice.tenantId, endpointId: id, state: 'failed', createdAt: at(2) },
      { _id: 'dlv_01', tenantId: alice.tenantId, endpointId: id, state: 'pending', createdAt: at(3) },
      { _id: 'dlv_04', tenantId: alice.tenantId, endpointId: 'we_other', state: 'pending', createdAt: at(4) },
      { _id: 'dlv_05', tenantId: bob.tenantId, endpointId: 'we_bob', state: 'pending', createdAt: at(5) },
    ]);
    const page1 = await gw.request('GET', `/api/v1/webhook-endpoints/${id}/deliveries?limit=2`, { key: alice.key });
    expect((page1.body.data as Array<{ id: string }>).map((d) => d.id)).toEqual(['dlv_01', 'dlv_03']);
    expect(page1.body.has_more).toBe(true);
    expect(page1.body.data[0]).not.toHaveProperty('tenantId');
    // Only the log's own fields: never the notifier's scheduling or the event behind it.
    const internal = { trigger: { kind: 'record' }, cycleAttempts: 1, eventId: 'evt', leaseId: 'l', due: '1' };
    await deliveries.updateOne({ _id: 'dlv_01' }, { $set: { ...internal, dueAt: at(9) } });
    const shown = (await gw.request('GET', `/api/v1/webhook-endpoints/${id}/deliveries?limit=1`, { key: alice.key }))
      .body.data[0] as Record<string, unknown>;
    expect(Object.keys(shown).sort()).toEqual(['createdAt', 'dueAt', 'endpointId', 'id', 'state']);
    const page2 = await gw.request('GET', `/api/v1/webhook-endpoints/${id}/deliveries?limit=2&starting_after=dlv_03`, {
      key: alice.key,
    });
    expect(page2.body).toEqual({ data: [expect.objectContaining({ id: 'dlv_02' })], has_more: false });
    const foreignCursor = await gw.request('GET', `/api/v1/webhook-endpoints/${id}/deliveries?starting_after=dlv_04`, {
      key: alice.key,
    });
    expect(foreignCursor.status).toBe(400);
    expect(foreignCursor.body.error.details).toEqual([expect.objectContaining({ path: ['starting_after'] })]);

    expect((await gw.request('POST', '/api/v1/deliveries/dlv_05/retry', { key: alice.key })).status).toBe(404);
    // Not while the endpoint is switched off (it was created so): 409, not a 202 that the notifier fails at once.
    const off = await gw.request('POST', '/api/v1/deliveries/dlv_02/retry', { key: alice.key });
    expect([off.status, off.body.error.code]).toEqual([409, 'conflict']);
    // Not while an attempt is under way (the notifier would leave it alone): 409, not a 202 that does nothing.
    await deliveries.updateOne({ _id: 'dlv_03' }, { $set: { state: 'sending' } });
    const busy = await gw.request('POST', '/api/v1/deliveries/dlv_03/retry', { key: alice.key });
    expect([busy.status, busy.body.error.code]).toEqual([409, 'conflict']);
    await deliveries.updateOne({ _id: 'dlv_03' }, { $set: { state: 'failed' } });
    const replay = await gw.request('POST', `/api/v1/webhook-endpoints/${id}/replay`, {
      key: alice.key,
      body: { since: '2026-01-01T00:00:00Z' },
    });
    expect(replay.status).toBe(202);
    const badReplay = await gw.request('POST', `/api/v1/webhook-endpoints/${id}/replay`, {
      key: alice.key,
      body: { since: 'yesterday' },
    });
    expect(badReplay.status).toBe(400);
    const enable = await gw.request('PATCH', `/api/v1/webhook-endpoints/${id}`, {
      key: alice.key,
      body: { enabled: true },
    });
    expect(enable.status).toBe(200);
    const retry = await gw.request('POST', '/api/v1/deliveries/dlv_02/retry', { key: alice.key });
    expect(retry.status).toBe(202);

    const messages = await gw.readTopic(gw.topics.webhookCommands, 3);
    const commands = messages.map((m) => WebhookCommand.parse(JSON.parse(String(m.value))));
    expect(messages.map((m) => String(m.key))).toEqual([id, id, id]);
    expect(commands).toEqual([
      expect.objectContaining({
        type: 'ReplayEndpoint',
        endpointId: id,
        since: '2026-01-01T00:00:00.000Z',
        id: replay.body.id,
      }),
      expect.objectContaining({ type: 'EnableEndpoint', endpointId: id, tenantId: alice.tenantId }),
      expect.objectContaining({
        type: 'RetryDelivery',
        deliveryId: 'dlv_02',
        tenantId: alice.tenantId,
        id: retry.body.id,
      }),
    ]);
    expect(messages.map((m) => String(m.headers?.['event-type']))).toEqual([
      'ReplayEndpoint',
      'EnableEndpoint',
      'RetryDelivery',
    ]);
  });
});

describe('retry', () => {
  it("answers 404 not_found naming the endpoint for a delivery of a deleted endpoint, as the endpoint's log does", async () => {
    const { id } = await aliceEndpoint({ url: 'https://hooks.example.com/deleted' });
    await failedDelivery('dlv_orphan', id);
    expect((await gw.request('POST', '/api/v1/deliveries/dlv_orphan/retry', { key: alice.key })).status).toBe(202);
    expect((await gw.request('DELETE', `/api/v1/webhook-endpoints/${id}`, { key: alice.key })).status).toBe(200);
    const log = await gw.request('GET', `/api/v1/webhook-endpoints/${id}/deliveries`, { key: alice.key });
    expect([log.status, log.body.error.code]).toEqual([404, 'not_found']);
    const retry = await gw.request('POST', '/api/v1/deliveries/dlv_orphan/retry', { key: alice.key });
    expect([retry.status, retry.body.error.code]).toEqual([404, 'not_found']);
    expect(retry.body.error.message).toContain(id);
  });

  it('answers 409 conflict naming the endpoint for a delivery of an endpoint switched off, and 202 once it is on', async () => {
    const { id } = await aliceEndpoint({ url: 'https://hooks.example.com/switched-off' });
    await failedDelivery('dlv_off', id);
    const patch = (enabled: boolean) =>
      gw.request('PATCH', `/api/v1/webhook-endpoints/${id}`, { key: alice.key, body: { enabled } });
    expect((await patch(false)).status).toBe(200);
    const retry = await gw.request('POST', '/api/v1/deliveries/dlv_off/retry', { key: alice.key });
    expect([retry.status, retry.body.error.code]).toEqual([409, 'conflict']);
    expect(retry.body.error.message).toContain(id);
    expect((await patch(true)).status).toBe(200);
    expect((await gw.request('POST', '/api/v1/deliveries/dlv_off/retry', { key: alice.key })).status).toBe(202);
  });

  it('is documented as refused for a delivery being sent or of a deleted endpoint', async () => {
    const doc = (await gw.request('GET', '/openapi.json')).body;
    const retry = doc.paths['/api/v1/deliveries/{id}/retry'].post as { summary: string };
    expect(retry.summary).toMatch(/409 conflict while it is being sent/);
    expect(retry.summary).toMatch(/404 not_found once its endpoint is deleted/);
  });
});

// After the test reading the first commands off the topic: this one queues an EnableEndpoint.
describe('re-enabling', () => {
  it('answers a PATCH enabled: true on an endpoint the notifier disabled with the state it leaves, as a GET then reads', async () => {
    const { id } = await aliceEndpoint({ url: 'https://hooks.example.com/reenabled' });
    const at = new Date('2026-01-02T03:04:05.000Z');
    await endpointState(id, { failingSince: at, disabledAt: at, disabledReason: 'gone' });
    // The operator's switch and the notifier's verdict are apart: the endpoint is enabled, and disabled as gone.
    const read = await gw.request('GET', `/api/v1/webhook-endpoints/${id}`, { key: alice.key });
    expect(read.body.data).toMatchObject({ enabled: true, disabledAt: at.toISOString(), disabledReason: 'gone' });
    const patched = await gw.request('PATCH', `/api/v1/webhook-endpoints/${id}`, {
      key: alice.key,
      body: { enabled: true },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({
      enabled: true,
      disabledAt: null,
      disabledReason: null,
      failingSince: null,
    });
    // The command the notifier applies to leave that state is queued.
    const messages = await gw.readTopic(gw.topics.webhookCommands, 1);
    await waitFor(
      () =>
        messages.some((m) => {
          const command = WebhookCommand.parse(JSON.parse(String(m.value)));
          return command.type === 'EnableEndpoint' && command.endpointId === id;
        }),
      { timeoutMs: 30000, what: 'the EnableEndpoint command' },
    );
  });
});

/**
 * POST without any body and neither Content-Length nor Transfer-Encoding, as `curl -X POST` sends it (fetch and
 * Node's http client would send `Content-Length: 0`), on a connection of its own.
 */
function bodilessPost(path: string, headers: Record<string, string>): Promise<Pick<Reply, 'status' | 'body'>> {
  const url = new URL(gw.url);
  const head = Object.entries({ host: url.host, connection: 'close', ...headers })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname, () =>
      socket.write(`POST ${path} HTTP/1.1\r\n${head}\r\n`),
    );
    let raw = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (raw += chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0);
      const text = raw.slice(raw.indexOf('\r\n\r\n') + 4);
      resolve({ status, body: text ? JSON.parse(text) : undefined });
    });
  });
}

describe('replay', () => {
  it('is documented as re-sending failed deliveries only, as the notifier does', async () => {
    const doc = (await gw.request('GET', '/openapi.json')).body;
    const replay = doc.paths['/api/v1/webhook-endpoints/{id}/replay'].post as {
      summary: string;
      requestBody: { content: { 'application/json': { schema: { properties: { since: { description: string } } } } } };
    };
    expect(replay.summary).toMatch(/failed deliveries/);
    const since = replay.requestBody.content['application/json'].schema.properties.since.description;
    expect(since).toMatch(/^Re-send the failed deliveries created since then; succeeded and pending ones are not/);
    expect(since).toMatch(/while the endpoint was disabled have no delivery/);
  });
});

describe('bodiless webhook actions', () => {
  it('takes a POST announcing JSON without any body as an empty body, as without Content-Type', async () => {
    const { id } = await aliceEndpoint({ url: 'https://hooks.example.com/bodiless' });
    await failedDelivery('dlv_bodiless', id);
    for (const headers of [{}, { 'content-type': 'application/json' }] as Array<Record<string, string>>) {
      const all = { authorization: `Bearer ${alice.key}`, ...headers };
      const rotated = await bodilessPost(`/api/v1/webhook-endpoints/${id}/rotate-secret`, all);
      expect(rotated.status).toBe(200);
      expect(rotated.body.secret).toMatch(/^whsec_/);
      // The default overlap, one day.
      const overlap = new Date(rotated.body.previousSecretExpiresAt as string).getTime() - Date.now();
      expect(overlap).toBeGreaterThan(86_400_000 - 60_000);
      expect((await bodilessPost('/api/v1/deliveries/dlv_bodiless/retry', all)).status).toBe(202);
      // `since` is required: the missing field is named, as for `{}`.
      const replay = await bodilessPost(`/api/v1/webhook-endpoints/${id}/replay`, all);
      expect(replay.status).toBe(400);
      expect(replay.body.error).toMatchObject({ code: 'validation_error', details: [{ path: ['since'] }] });
    }
  });

  it('still refuses a bodiless POST announcing another type with 415', async () => {
    const reply = await bodilessPost('/api/v1/webhook-endpoints/we_x/rotate-secret', {
      authorization: `Bearer ${alice.key}`,
      'content-type': 'text/plain',
    });
    expect(reply.status).toBe(415);
  });
});

describe('webhook endpoint registration guard', () => {
  it.each([
    ['the unspecified address', 'http://0.0.0.0:8080/hook'],
    ['a private IP', 'http://10.1.2.3/hook'],
    ['the cloud metadata address', 'http://169.254.169.254/latest/meta-data/'],
    ['the IPv6 metadata address', 'http://[fd00:ec2::254]/'],
    ['a link-local address', 'http://169.254.10.1/'],
    ['a name resolving to a private address', 'https://hooks.internal.test/vigil'],
    ['a name that does not resolve', 'https://hooks.missing.test/vigil'],
    ['a name longer than DNS allows (5 labels of 63)', `http://${Array<string>(5).fill('a'.repeat(63)).join('.')}/`],
    ['a name with a label longer than 63 characters', `https://${'h'.repeat(64)}.example.com/`],
  ])('refuses %s with 400 validation_error on url, at creation and on update', async (_name, url) => {
    const created = await gw.request('POST', '/api/v1/webhook-endpoints', { key: alice.key, body: { url } });
    expect(created.status).toBe(400);
    expect(created.body.error).toMatchObject({ code: 'validation_error', details: [{ path: ['url'] }] });

    const ok = await gw.request('POST', '/api/v1/webhook-endpoints', {
      key: bob.key,
      body: { url: 'https://hooks.example.com/guard' },
    });
    const patched = await gw.request('PATCH', `/api/v1/webhook-endpoints/${ok.body.data.id}`, {
      key: bob.key,
      body: { url },
    });
    expect(patched.status).toBe(400);
    expect(patched.body.error).toMatchObject({ code: 'validation_error', details: [{ path: ['url'] }] });
    await gw.request('DELETE', `/api/v1/webhook-endpoints/${ok.body.data.id}`, { key: bob.key });
  });

  it('accepts a local receiver inside WEBHOOK_ALLOWED_CIDRS (the tests allow loopback)', async () => {
    const tenant = await gw.newTenant();
    for (const url of ['http://127.0.0.1:9/hook', 'http://localhost:9/hook', 'http://[::1]:9/hook']) {
      const created = await gw.request('POST', '/api/v1/webhook-endpoints', { key: tenant.key, body: { url } });
      expect(created.status).toBe(201);
    }
  });
});

describe('webhook endpoint cap', () => {
  let capped: Gateway;
  beforeAll(async () => {
    capped = await startGateway({ webhookMaxEndpointsPerTenant: 3 });
  });
  afterAll(async () => {
    await capped.close();
  });

  it('returns 409 limit_exceeded past the per-tenant cap, per tenant, and frees a slot on delete', async () => {
    const [one, two] = [await capped.newTenant(), await capped.newTenant()];
    const create = (key: string) =>
      capped.request('POST', '/api/v1/webhook-endpoints', { key, body: { url: 'https://hooks.example.com/cap' } });
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const created = await create(one.key);
      expect(created.status).toBe(201);
      ids.push(created.body.data.id as string);
    }
    const refused = await create(one.key);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'limit_exceeded', details: { limit: 3 } });
    expect((await create(two.key)).status).toBe(201);

    await capped.request('DELETE', `/api/v1/webhook-endpoints/${ids[0]}`, { key: one.key });
    expect((await create(one.key)).status).toBe(201);
  });

  it('keeps the cap under concurrent registrations', async () => {
    const tenant = await capped.newTenant();
    const replies = await Promise.all(
      Array.from({ length: 8 }, () =>
        capped.request('POST', '/api/v1/webhook-endpoints', {
          key: tenant.key,
          body: { url: 'https://hooks.example.com/race' },
        }),
      ),
    );
    expect(replies.every((reply) => reply.status === 201 || reply.status === 409)).toBe(true);
    const listed = await capped.request('GET', '/api/v1/webhook-endpoints?limit=100', { key: tenant.key });
    expect(listed.body.data.length).toBeLessThanOrEqual(3);
  });
});

describe('rules and settings', () => {
  const ruleSet = {
    rules: [
      {
        id: 'spam',
        name: 'Spam',
        strategies: [{ type: 'blocklist', words: ['buy now'], wholeWord: true }],
      },
    ],
  };

  it('serves the default rules until a tenant replaces them, and only for that tenant', async () => {
    const carol = await gw.newTenant();
    expect((await gw.request('GET', '/api/v1/rules', { key: carol.key })).body).toEqual({
      ...DEFAULT_RULES,
      version: 0,
    });
    const put = await gw.request('PUT', '/api/v1/rules', { key: carol.key, body: ruleSet });
    expect(put.status).toBe(200);
    expect(put.body.rules[0]).toMatchObject({ id: 'spam', enabled: true, entities: [] });
    expect(put.body.version).toBe(1);
    expect((await gw.request('GET', '/api/v1/rules', { key: carol.key })).body).toEqual(put.body);
    expect((await gw.request('GET', '/api/v1/rules', { key: bob.key })).body).toEqual({ ...DEFAULT_RULES, version: 0 });
  });

  it('refuses an invalid rule set with every path', async () => {
    const reply = await gw.request('PUT', '/api/v1/rules', {
      key: alice.key,
      body: {
        rules: [
          { id: 'Bad Id', name: '', strategies: [{ type: 'patterns', patterns: ['('] }] },
          { id: 'ok', name: 'x', strategies: [] },
        ],
      },
    });
    expect(reply.status).toBe(400);
    const paths = (reply.body.error.details as Array<{ path: unknown[] }>).map((d) => d.path.join('.')).sort();
    expect(paths).toEqual(['rules.0.id', 'rules.0.name', 'rules.0.strategies.0.patterns.0', 'rules.1.strategies']);
  });

  it('refuses with 400 validation_error the patterns RE2 cannot run (lookaround, backreferences), naming each path', async () => {
    const reply = await gw.request('PUT', '/api/v1/rules', {
      key: alice.key,
      body: {
        rules: [
          {
            id: 'p',
            name: 'p',
            strategies: [{ type: 'patterns', patterns: ['(a|a)*$', 'foo(?=bar)', '(\\w+) \\1', '(?<!x)y'] }],
          },
        ],
      },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('validation_error');
    const details = reply.body.error.details as Array<{ path: unknown[]; message: string }>;
    expect(details.map((d) => d.path.join('.'))).toEqual([
      'rules.0.strategies.0.patterns.1',
      'rules.0.strategies.0.patterns.2',
      'rules.0.strategies.0.patterns.3',
    ]);
    for (const detail of details) expect(detail.message).toMatch(/backreferences and lookaround are not supported/);
  });

  it('patches settings per tenant, keeping the fields not sent', async () => {
    const dave = await gw.newTenant();
    const defaults = {
      suspensionThreshold: 1,
      testMode: false,
      rolloutPercentage: 100,
      emails: { enabled: false, templates: {} },
      trustedFlaggers: [],
      policies: [],
      flaggedVisibility: 'DECISION_VISIBILITY_CONTENT_DISABLED',
      appealWindowDays: 183,
      reporterEmailRetentionDays: 213,
      ruleDegradedOverturnRate: null,
      ruleDegradedMinReviews: 20,
      payments: { stripeSecretKey: null },
    };
    expect((await gw.request('GET', '/api/v1/settings', { key: dave.key })).body).toEqual(defaults);
    await gw.request('PATCH', '/api/v1/settings', { key: dave.key, body: { suspensionThreshold: 3 } });
    const second = await gw.request('PATCH', '/api/v1/settings', { key: dave.key, body: { testMode: true } });
    expect(second.body).toEqual({ ...defaults, suspensionThreshold: 3, testMode: true });
    expect((await gw.request('GET', '/api/v1/settings', { key: bob.key })).body).toEqual(defaults);
    const bad = await gw.request('PATCH', '/api/v1/settings', {
      key: dave.key,
      body: { suspensionThreshold: 0, x: 1 },
    });
    expect(bad.status).toBe(400);
    expect((bad.body.error.details as Array<{ path: unknown[] }>).map((d) => d.path.join('.')).sort()).toEqual([
      'suspensionThreshold',
      'x',
    ]);
  });
});
