import { createHmac } from 'node:crypto';
import { COLLECTIONS, type EndpointStateDoc } from '@vigil/proto';
import { Webhook } from 'standardwebhooks';
import { ulid } from 'ulid';
import { waitFor } from '../../../deploy/test-support';
import {
  SECRET,
  createReceiver,
  createWorld,
  recordModerated,
  userStatusChanged,
  type Receiver,
  type World,
} from './harness';

let world: World;
const receivers: Receiver[] = [];
const receiver = async (...args: Parameters<typeof createReceiver>) => {
  const created = await createReceiver(...args);
  receivers.push(created);
  return created;
};

beforeAll(async () => {
  world = await createWorld();
  await world.start({ DELIVERY_LOG_RESPONSE_BODY: 'true', DELIVERY_CONCURRENCY_PER_ENDPOINT: '4' });
});

afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await world.close();
});

const verify = (body: string, headers: Record<string, unknown>) =>
  new Webhook(SECRET).verify(body, headers as Record<string, string>);

/**
 * A stack of its own for the tests of the enclosing describe, started with `overrides` before them and closed after:
 * the function answers it (within those tests).
 */
function worldOfItsOwn(overrides?: Partial<Record<string, string>>): () => World {
  let own: World | undefined;
  beforeAll(async () => {
    own = await createWorld();
    await own.start(overrides);
  });
  afterAll(async () => {
    await own?.close();
  });
  return () => {
    if (!own) throw new Error('the stack starts in beforeAll: call this within a test');
    return own;
  };
}

/**
 * A new tenant of `stack` with an endpoint at `url`, and the event of one of its records (`clientId`) published: one
 * delivery to make.
 */
async function deliveryFor(stack: World, url: string, clientId: string) {
  const tenant = stack.tenant();
  const endpoint = await tenant.endpoint(url);
  await stack.publish(recordModerated(tenant, await tenant.record(clientId)));
  return { tenant, endpoint };
}

/** The endpoint's state in `stack`, once the notifier has disabled it. */
const disabledState = (stack: World, endpointId: string) =>
  waitFor(
    () =>
      stack.db
        .collection<EndpointStateDoc>(COLLECTIONS.endpointStates)
        .findOne({ _id: endpointId, disabledAt: { $exists: true } }),
    { what: 'endpoint disabled' },
  );

/** The tenant's deliveries in `state` (in `stack`), once there is exactly one. */
const onlyDelivery = (stack: World, tenantId: string, state: string, what = `${state} delivery`) =>
  waitFor(
    async () => {
      const docs = await stack.deliveries({ tenantId, state });
      return docs.length === 1 ? docs : undefined;
    },
    { what },
  );

describe('notifier deliveries', () => {
  it('delivers record.flagged in Iffy shape, signed with Standard Webhooks and X-Signature', async () => {
    const hook = await receiver();
    const tenant = world.tenant();
    await tenant.endpoint(hook.url);
    const user = await tenant.user('u-1', {
      status: 'Compliant',
      statusUpdatedAt: new Date(1700000000000),
      email: 'someone@example.com',
      name: 'Some One',
    });
    const record = await tenant.record('post-1', { userId: user._id, metadata: { lang: 'en' } });
    const event = recordModerated(tenant, record, { via: 'AI' });
    await world.publish(event);

    const [got] = await waitFor(() => (hook.received.length >= 1 ? hook.received : undefined), { what: 'webhook' });
    expect(verify(got!.body, got!.headers)).toBeTruthy();
    expect(got!.headers['x-signature']).toBe(createHmac('sha256', SECRET).update(got!.body).digest('hex'));
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['user-agent']).toBe('Vigil-Webhooks/1');
    expect(got!.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
    const body = JSON.parse(got!.body) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['event', 'timestamp', 'id', 'payload']);
    expect(body).toEqual({
      event: 'record.flagged',
      timestamp: expect.stringMatching(/^\d{13}$/),
      id: (event.data as { moderationId: string }).moderationId,
      payload: {
        id: record._id,
        clientId: 'post-1',
        name: 'Name of post-1',
        entity: 'Post',
        protected: false,
        metadata: { lang: 'en' },
        status: 'Flagged',
        statusUpdatedAt: String(Date.parse(event.occurredAt)),
        statusUpdatedVia: 'AI',
        // The flag's statement of reasons (Art. 17 DSA): fully automated, the default policy.
        statement: expect.objectContaining({
          kind: 'restriction',
          subject: { type: 'record', id: record._id },
          automatedDecision: 'AUTOMATED_DECISION_FULLY',
          category: 'STATEMENT_CATEGORY_OTHER_VIOLATION_TC',
        }),
        user: {
          id: user._id,
          clientId: 'u-1',
          protected: false,
          status: 'Compliant',
          statusUpdatedAt: '1700000000000',
        },
      },
    });
    expect(got!.body).not.toContain('someone@example.com');

    const [delivery] = await onlyDelivery(world, tenant.tenantId, 'succeeded');
    expect(delivery!.webhookId).toBe(got!.headers['webhook-id']);
    expect(delivery!.attempts).toEqual([
      expect.objectContaining({ statusCode: 200, responseBody: 'ok', durationMs: expect.any(Number) }),
    ]);
  });

  it('delivers user.banned without email or name, and omits a passthrough record name', async () => {
    const hook = await receiver();
    const tenant = world.tenant();
    await tenant.endpoint(hook.url);
    const user = await tenant.user('u-2', { email: 'x@example.com', name: 'X', username: 'xx' });
    const record = await tenant.record('pt-1', { name: undefined, passthrough: true });
    const banned = userStatusChanged(tenant, user, { status: 'Banned', via: 'Manual' });
    await world.publish(banned, recordModerated(tenant, record, { previousStatus: null, status: 'Compliant' }));

    const got = await waitFor(() => (hook.received.length >= 2 ? hook.received : undefined), { what: 'webhooks' });
    const bodies = got.map(
      (r) => JSON.parse(r.body) as { event: string; id: string; payload: Record<string, unknown> },
    );
    const userEvent = bodies.find((b) => b.event === 'user.banned');
    expect(userEvent).toEqual({
      event: 'user.banned',
      timestamp: expect.any(String),
      id: (banned.data as { actionId: string }).actionId,
      payload: {
        id: user._id,
        clientId: 'u-2',
        protected: false,
        status: 'Banned',
        statusUpdatedAt: String(Date.parse(banned.occurredAt)),
        statusUpdatedVia: 'Manual',
        statement: expect.objectContaining({ restriction: { account: 'DECISION_ACCOUNT_TERMINATED', endDate: null } }),
      },
    });
    const recordEvent = bodies.find((b) => b.event === 'record.compliant');
    expect(recordEvent?.payload).not.toHaveProperty('name');
    expect(recordEvent?.payload.id).toBe(record._id);
    for (const r of got) expect(verify(r.body, r.headers)).toBeTruthy();
  });

  it('retries a 500, a timeout and a dropped connection, then succeeds with the same webhook-id and body', async () => {
    let calls = 0;
    const hook = await receiver((req, res) => {
      calls += 1;
      if (calls === 1) res.writeHead(500).end('boom');
      else if (calls === 2)
        return; // never answers: the 1 s timeout fires
      else if (calls === 3) req.socket.destroy();
      else res.writeHead(204).end();
    });
    const { tenant } = await deliveryFor(world, hook.url, 'retry-1');

    const [delivery] = await onlyDelivery(world, tenant.tenantId, 'succeeded', 'success after retries');
    expect(delivery!.attempts.map((a) => a.statusCode ?? a.error)).toEqual([500, 'timeout', 'network_error', 204]);
    expect(delivery!.attempts[0]!.responseBody).toBe('boom');
    expect(delivery!.attemptCount).toBe(4);
    expect(new Set(hook.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([delivery!.webhookId]));
    expect(new Set(hook.received.map((r) => r.body)).size).toBe(1);
    for (const r of hook.received) expect(verify(r.body, r.headers)).toBeTruthy();
  });

  it('gives up after the last scheduled retry and records every attempt', async () => {
    const hook = await receiver((_req, res) => res.writeHead(503).end('x'.repeat(5000)));
    const { tenant } = await deliveryFor(world, hook.url, 'fail-1');
    const [delivery] = await onlyDelivery(world, tenant.tenantId, 'failed');
    // The first attempt plus one per entry of the 0.2,0.5,1 schedule.
    expect(delivery!.attempts).toHaveLength(4);
    expect(delivery!.lastError).toBe('http_503');
    expect(delivery!.attempts[0]!.responseBody).toHaveLength(1024);
    expect(hook.received).toHaveLength(4);
  });

  it('records answers whose bodies hold a NUL character without it, and delivers the webhook once', async () => {
    // PostgreSQL, under FerretDB, refuses a string with a NUL: kept as it came, no attempt could be recorded.
    let calls = 0;
    const hook = await receiver((_req, res) => {
      calls += 1;
      if (calls === 1) res.writeHead(500).end('bad\u0000answer');
      else res.writeHead(200).end('ok\u0000done');
    });
    const { tenant } = await deliveryFor(world, hook.url, 'nul-1');
    const [delivery] = await onlyDelivery(world, tenant.tenantId, 'succeeded', 'delivered despite the NUL');
    expect(delivery!.attempts.map((a) => [a.statusCode, a.responseBody])).toEqual([
      [500, 'badanswer'],
      [200, 'okdone'],
    ]);
    expect(delivery!.attemptCount).toBe(2);
    expect(hook.received).toHaveLength(2);
  });

  it('waits for Retry-After before the next attempt', async () => {
    let calls = 0;
    const hook = await receiver((_req, res) => {
      calls += 1;
      if (calls === 1) res.writeHead(429, { 'retry-after': '2' }).end();
      else res.writeHead(200).end();
    });
    await deliveryFor(world, hook.url, 'ra-1');
    await waitFor(() => hook.received.length >= 2, { what: 'second attempt' });
    const gap = hook.received[1]!.at - hook.received[0]!.at;
    // The schedule alone would retry after about 0.2 s.
    expect(gap).toBeGreaterThanOrEqual(1900);
  });

  it('disables the endpoint on 410 Gone and creates no deliveries for it afterwards', async () => {
    const hook = await receiver((_req, res) => res.writeHead(410).end());
    const { tenant, endpoint } = await deliveryFor(world, hook.url, 'gone-1');
    const state = await disabledState(world, endpoint._id);
    expect(state.disabledReason).toBe('gone');
    const [delivery] = await world.deliveries({ endpointId: endpoint._id });
    expect(delivery!.state).toBe('failed');
    expect(delivery!.attempts).toHaveLength(1);

    // A later event for the same tenant reaches a second endpoint, not the disabled one.
    const other = await receiver();
    await tenant.endpoint(other.url);
    await world.publish(recordModerated(tenant, await tenant.record('gone-2')));
    await waitFor(() => other.received.length === 1, { what: 'other endpoint' });
    expect(await world.deliveries({ endpointId: endpoint._id })).toHaveLength(1);
    expect(hook.received).toHaveLength(1);

    // EnableEndpoint clears the state; a replay re-sends the failed delivery.
    hook.handler = (_req, res) => res.writeHead(200).end();
    const now = new Date().toISOString();
    await world.command({
      id: ulid(),
      tenantId: tenant.tenantId,
      issuedAt: now,
      type: 'EnableEndpoint',
      endpointId: endpoint._id,
    });
    await world.command({
      id: ulid(),
      tenantId: tenant.tenantId,
      issuedAt: now,
      type: 'ReplayEndpoint',
      endpointId: endpoint._id,
      since: new Date(Date.now() - 60000).toISOString(),
    });
    await waitFor(() => hook.received.length === 2, { what: 'replayed delivery' });
    expect(hook.received[1]!.headers['webhook-id']).toBe(hook.received[0]!.headers['webhook-id']);
    await waitFor(async () => (await world.deliveries({ endpointId: endpoint._id, state: 'succeeded' })).length === 1);
  });

  it('replays the failed deliveries only: one that succeeded is not sent again', async () => {
    const hook = await receiver((_req, res, entry) =>
      res.writeHead(entry.body.includes('"clientId":"rp-bad"') ? 500 : 200).end(),
    );
    const tenant = world.tenant();
    const endpoint = await tenant.endpoint(hook.url);
    await world.publish(recordModerated(tenant, await tenant.record('rp-ok')));
    await world.publish(recordModerated(tenant, await tenant.record('rp-bad')));
    const stateOf = async (state: string) => {
      const docs = await world.deliveries({ endpointId: endpoint._id, state });
      return docs.length === 1 ? docs[0] : undefined;
    };
    const failed = await waitFor(() => stateOf('failed'), { what: 'failed delivery' });
    const succeeded = await waitFor(() => stateOf('succeeded'), { what: 'succeeded delivery' });
    expect(succeeded.attemptCount).toBe(1);

    hook.handler = (_req, res) => res.writeHead(200).end();
    await world.command({
      id: ulid(),
      tenantId: tenant.tenantId,
      issuedAt: new Date().toISOString(),
      type: 'ReplayEndpoint',
      endpointId: endpoint._id,
      since: new Date(Date.now() - 60000).toISOString(),
    });
    const replayed = await waitFor(async () => (await world.deliveries({ _id: failed._id, state: 'succeeded' }))[0], {
      what: 'replayed delivery',
    });
    expect(replayed.attemptCount).toBe(failed.attemptCount + 1);
    // The replay touched the failed delivery only (one update of both would have re-opened the succeeded one too).
    const [untouched] = await world.deliveries({ _id: succeeded._id });
    expect(untouched).toMatchObject({ state: 'succeeded', attemptCount: 1 });
    expect(hook.received.filter((r) => r.body.includes('"clientId":"rp-ok"'))).toHaveLength(1);
  });

  it('does not follow redirects: a 3xx is a failed attempt', async () => {
    const target = await receiver();
    const hook = await receiver((_req, res) => res.writeHead(307, { location: target.url }).end());
    const { tenant } = await deliveryFor(world, hook.url, 'redir-1');
    const [delivery] = await onlyDelivery(world, tenant.tenantId, 'failed');
    expect(delivery!.attempts.map((a) => a.statusCode)).toEqual([307, 307, 307, 307]);
    expect(target.received).toHaveLength(0);
  });

  it('creates one delivery for an event published twice, and none in test mode', async () => {
    const hook = await receiver();
    const tenant = world.tenant();
    await tenant.endpoint(hook.url);
    const record = await tenant.record('dup-1');
    const event = recordModerated(tenant, record);
    const testMode = recordModerated(tenant, await tenant.record('test-1'), { testMode: true });
    await world.publish(event, testMode, event);
    // A later event on the same stream is the barrier: everything before it was consumed.
    const barrier = recordModerated(tenant, record, { status: 'Compliant', previousStatus: 'Flagged' });
    await world.publish(barrier);
    await waitFor(() => hook.received.length >= 2, { what: 'two webhooks' });
    await waitFor(async () => (await world.deliveries({ tenantId: tenant.tenantId, state: 'succeeded' })).length === 2);
    const deliveries = await world.deliveries({ tenantId: tenant.tenantId });
    expect(deliveries.map((d) => d.eventId).sort()).toEqual([event.id, barrier.id].sort());
    // Two deliveries of one endpoint may arrive in either order (docs/webhooks.md, "Duplicates and order").
    expect(hook.received.map((r) => (JSON.parse(r.body) as { event: string }).event).sort()).toEqual([
      'record.compliant',
      'record.flagged',
    ]);

    // Re-published later (the outbox sweep after a crash, which marks it so), in a batch of its own: still nothing
    // new, and nothing sent again.
    const second = recordModerated(tenant, record, { status: 'Flagged', previousStatus: 'Compliant' });
    await world.republish(event);
    await world.publish(second);
    await waitFor(() => hook.received.length >= 3, { what: 'third webhook' });
    await waitFor(async () => (await world.deliveries({ tenantId: tenant.tenantId, state: 'succeeded' })).length === 3);
    expect((await world.deliveries({ tenantId: tenant.tenantId })).map((d) => d.eventId).sort()).toEqual(
      [event.id, barrier.id, second.id].sort(),
    );
    expect(hook.received).toHaveLength(3);
  });

  it('waits for a projection that trails its event, then sends the full payload', async () => {
    const hook = await receiver();
    const tenant = world.tenant();
    await tenant.endpoint(hook.url);
    const clientId = 'late-1';
    const { recordIdFor } = await import('@vigil/proto');
    const placeholder = { _id: recordIdFor(tenant.tenantId, clientId) } as Parameters<typeof recordModerated>[1];
    const event = recordModerated(tenant, placeholder);
    await world.publish(event);
    await waitFor(async () => (await world.deliveries({ tenantId: tenant.tenantId })).length === 1, {
      what: 'delivery created before the projection',
    });
    expect(hook.received).toHaveLength(0);
    await tenant.record(clientId);
    await waitFor(() => hook.received.length === 1, { what: 'webhook after the projection' });
    const body = JSON.parse(hook.received[0]!.body) as { payload: { clientId: string; name: string } };
    expect(body.payload).toMatchObject({ clientId, name: `Name of ${clientId}` });
  });

  it("builds the body from the event's view without a projection, reading only a user the view leaves out", async () => {
    const hook = await receiver();
    const tenant = world.tenant();
    await tenant.endpoint(hook.url);
    const { recordIdFor, userIdFor } = await import('@vigil/proto');
    // No record or user projection is stored for these: only the events' views can fill the payloads.
    const viewed = { _id: recordIdFor(tenant.tenantId, 'view-1'), userId: userIdFor(tenant.tenantId, 'vu-1') };
    const withUser = recordModerated(tenant, viewed as Parameters<typeof recordModerated>[1], {
      view: {
        clientId: 'view-1',
        clientUrl: 'https://example.com/p/1',
        name: 'Viewed',
        entity: 'Comment',
        protected: true,
        metadata: { k: 'v' },
        user: {
          clientId: 'vu-1',
          protected: false,
          metadata: { plan: 'pro' },
          status: 'Suspended',
          statusUpdatedAt: new Date(1700000000000).toISOString(),
        },
      },
    });
    // The moderation did not load this record's user: its projection (stored) fills the nested user.
    const stored = await tenant.user('vu-2', { status: 'Compliant' });
    const readUser = recordModerated(
      tenant,
      { _id: recordIdFor(tenant.tenantId, 'view-2'), userId: stored._id } as Parameters<typeof recordModerated>[1],
      // A masking `pii` strategy's copy of the text rides on the view, as /moderate answers it.
      { view: { clientId: 'view-2', entity: 'Post', protected: false, maskedContent: 'call [contact removed]' } },
    );
    const userId = userIdFor(tenant.tenantId, 'vu-3');
    const banned = userStatusChanged(tenant, { _id: userId } as Parameters<typeof userStatusChanged>[1], {
      status: 'Banned',
      view: { clientId: 'vu-3', protected: true, metadata: { m: 1 } },
    });
    await world.publish(withUser, readUser, banned);

    const got = await waitFor(() => (hook.received.length >= 3 ? hook.received : undefined), { what: 'webhooks' });
    const bodies = got.map((r) => JSON.parse(r.body) as { id: string; payload: Record<string, unknown> });
    const byId = new Map(bodies.map((body) => [body.id, body.payload]));
    expect(byId.get((withUser.data as { moderationId: string }).moderationId)).toEqual({
      id: viewed._id,
      clientId: 'view-1',
      clientUrl: 'https://example.com/p/1',
      name: 'Viewed',
      entity: 'Comment',
      protected: true,
      metadata: { k: 'v' },
      status: 'Flagged',
      statusUpdatedAt: String(Date.parse(withUser.occurredAt)),
      statusUpdatedVia: 'Automation',
      statement: expect.objectContaining({ kind: 'restriction' }),
      user: {
        id: viewed.userId,
        clientId: 'vu-1',
        protected: false,
        metadata: { plan: 'pro' },
        status: 'Suspended',
        statusUpdatedAt: '1700000000000',
      },
    });
    expect(byId.get((readUser.data as { moderationId: string }).moderationId)).toMatchObject({
      clientId: 'view-2',
      maskedContent: 'call [contact removed]',
      user: { id: stored._id, clientId: 'vu-2', status: 'Compliant' },
    });
    // A view without a masked copy sends none.
    expect(byId.get((withUser.data as { moderationId: string }).moderationId)).not.toHaveProperty('maskedContent');
    expect(byId.get((banned.data as { actionId: string }).actionId)).toEqual({
      id: userId,
      clientId: 'vu-3',
      protected: true,
      metadata: { m: 1 },
      status: 'Banned',
      statusUpdatedAt: String(Date.parse(banned.occurredAt)),
      statusUpdatedVia: 'Manual',
      statement: expect.objectContaining({ kind: 'restriction' }),
    });
  });

  it('sends only the events an endpoint subscribed to, and a manual retry re-sends a delivered webhook', async () => {
    const users = await receiver();
    const all = await receiver();
    const tenant = world.tenant();
    const usersEndpoint = await tenant.endpoint(users.url, { events: ['user.suspended'] });
    await tenant.endpoint(all.url);
    const user = await tenant.user('sub-1');
    await world.publish(recordModerated(tenant, await tenant.record('sub-r')), userStatusChanged(tenant, user));
    await waitFor(() => all.received.length === 2 && users.received.length === 1, { what: 'fan-out' });
    expect((JSON.parse(users.received[0]!.body) as { event: string }).event).toBe('user.suspended');

    const delivery = await waitFor(async () => {
      const docs = await world.deliveries({ endpointId: usersEndpoint._id, state: 'succeeded' });
      return docs[0];
    });
    await world.command({
      id: ulid(),
      tenantId: tenant.tenantId,
      issuedAt: new Date().toISOString(),
      type: 'RetryDelivery',
      deliveryId: delivery._id,
    });
    await waitFor(() => users.received.length === 2, { what: 'manual retry' });
    expect(users.received[1]!.headers['webhook-id']).toBe(delivery.webhookId);
    expect(users.received[1]!.body).toBe(users.received[0]!.body);
    expect(all.received).toHaveLength(2);
  });

  it('keeps a slow endpoint from holding back another one, with at most 4 of its requests open', async () => {
    let open = 0;
    let maxOpen = 0;
    const slow = await receiver((_req, res) => {
      // Never answers; the notifier's 1 s timeout closes the request.
      open += 1;
      maxOpen = Math.max(maxOpen, open);
      res.on('close', () => (open -= 1));
    });
    const fast = await receiver();
    const slowTenant = world.tenant();
    await slowTenant.endpoint(slow.url);
    const fastTenant = world.tenant();
    await fastTenant.endpoint(fast.url);
    const slowEvents = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => recordModerated(slowTenant, await slowTenant.record(`slow-${i}`))),
    );
    await world.publish(...slowEvents);
    await waitFor(() => slow.received.length >= 4, { what: 'slow endpoint saturated' });
    const started = Date.now();
    await world.publish(recordModerated(fastTenant, await fastTenant.record('fast-1')));
    await waitFor(() => fast.received.length === 1, { what: 'fast endpoint', timeoutMs: 5000 });
    // Well under the slow endpoint's 1 s timeouts: it did not wait for a slot.
    expect(Date.now() - started).toBeLessThan(1000);
    await waitFor(() => slow.received.length >= 8, { what: 'every slow delivery tried' });
    expect(maxOpen).toBe(4);
  });
});

describe('a receiver that was down', () => {
  // A schedule long enough (about 16 s) that the outage ends before it runs out even on a slow database.
  const patient = worldOfItsOwn({ WEBHOOK_RETRY_SCHEDULE_S: '0.3,0.5,1,2,4,8' });

  it('delivers everything to a receiver that was down and came back', async () => {
    const hook = await receiver();
    const port = hook.port;
    await hook.close();
    const tenant = patient().tenant();
    await tenant.endpoint(`http://127.0.0.1:${port}/hook`);
    const events = await Promise.all(
      ['down-1', 'down-2', 'down-3'].map(async (id) => recordModerated(tenant, await tenant.record(id))),
    );
    await patient().publish(...events);
    await waitFor(
      async () => {
        const docs = await patient().deliveries({ tenantId: tenant.tenantId });
        return docs.length === 3 && docs.every((d) => d.attempts.some((a) => a.error === 'network_error'));
      },
      { what: 'failed attempts while down' },
    );
    await hook.listen();
    await waitFor(() => hook.received.length === 3, { what: 'all webhooks after recovery' });
    const ids = hook.received.map((r) => (JSON.parse(r.body) as { id: string }).id).sort();
    expect(ids).toEqual(events.map((e) => (e.data as { moderationId: string }).moderationId).sort());
  });
});

describe('delivery log without the response body opt-in', () => {
  const plain = worldOfItsOwn();

  it('keeps status and timing of each attempt but not the response body', async () => {
    const hook = await receiver((_req, res) => res.writeHead(200).end('internal answer'));
    const { tenant } = await deliveryFor(plain(), hook.url, 'nobody-1');
    const [delivery] = await onlyDelivery(plain(), tenant.tenantId, 'succeeded', 'delivered');
    expect(delivery!.attempts).toEqual([{ at: expect.any(Date), statusCode: 200, durationMs: expect.any(Number) }]);
  });
});

describe('SSRF guard', () => {
  const strict = worldOfItsOwn({ WEBHOOK_ALLOWED_CIDRS: '' });

  it('refuses a loopback receiver without an allow-list entry and records ssrf_refused', async () => {
    const hook = await receiver();
    const tenant = strict().tenant();
    await tenant.endpoint(hook.url);
    await tenant.endpoint(`http://localhost:${hook.port}/by-name`);
    await strict().publish(recordModerated(tenant, await tenant.record('ssrf-1')));
    const docs = await waitFor(
      async () => {
        const found = await strict().deliveries({ tenantId: tenant.tenantId });
        return found.length === 2 && found.every((d) => d.attempts.length >= 1) ? found : undefined;
      },
      { what: 'refused attempts' },
    );
    for (const doc of docs) expect(doc.attempts[0]!.error).toBe('ssrf_refused');
    expect(hook.received).toHaveLength(0);
  });
});

describe('an endpoint failing past the window', () => {
  const short = worldOfItsOwn({
    WEBHOOK_DISABLE_AFTER_S: '1',
    WEBHOOK_RETRY_SCHEDULE_S: '0.3,0.3,0.3,0.3,0.3,0.3,0.3,0.3',
  });

  it('is disabled once it has failed without a success for longer than WEBHOOK_DISABLE_AFTER_S', async () => {
    const hook = await receiver((_req, res) => res.writeHead(500).end());
    const { endpoint } = await deliveryFor(short(), hook.url, 'window-1');
    const state = await disabledState(short(), endpoint._id);
    expect(state.disabledReason).toBe('failing');
    expect(state.disabledAt!.getTime() - state.failingSince!.getTime()).toBeGreaterThanOrEqual(1000);
    const [delivery] = await short().deliveries({ endpointId: endpoint._id });
    expect(delivery!.state).toBe('failed');
    // Stopped well before the eight scheduled retries ran out.
    expect(delivery!.attempts.length).toBeLessThan(9);
  });
});
