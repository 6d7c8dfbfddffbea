import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { COLLECTIONS, recordIdFor, userIdFor } from '@vigil/proto';
import type { Receiver } from '../../../deploy/e2e/support';
import { grpcAddressOf, spawnModerator, uniqueName, waitFor, type ServiceProcess } from '../../../deploy/test-support';
import { startGateway, startServiceStack, type Gateway, type ServiceStack } from './harness';
import { KNOWN_ABUSE_POLICY, ORIGINAL, PHOTOS, startPhotoServer, type PhotoServer } from './hash-support';

// Retroactive matching end to end: records with images moderated first (their hashes kept), then a hash added to a
// bank flags the earlier records through the ordinary moderation path. The moderator and the notifier are processes
// (`npm run build` first), the images served by a local HTTP server, webhooks received on 127.0.0.1. Nothing sleeps.

const WAIT = 60_000;
// `shrink-a-lot.jpg` is near ORIGINAL (`aaa-orig.jpg`).

let images: PhotoServer;
let base: string;

beforeAll(async () => {
  images = await startPhotoServer(['bridge-mods', 'misc-images']);
  base = images.base;
});

afterAll(() => images?.close());

interface Webhook {
  event: string;
  payload: { id: string; clientId: string; statement?: Record<string, unknown> };
}

interface StoredEvent {
  type: string;
  correlationId: string;
  data: Record<string, unknown>;
}

/** A tenant's API calls, and what the store holds of its records. */
function tenantApi(gw: Gateway, tenant: { tenantId: string; key: string }) {
  const call = (method: string, route: string, body?: unknown) =>
    gw.request(method, `/api/v1${route}`, { key: tenant.key, ...(body !== undefined ? { body } : {}) });
  return {
    tenantId: tenant.tenantId,
    call,
    moderate: (clientId: string, image: string, extra: Record<string, unknown> = {}) =>
      call('POST', '/moderate', {
        clientId,
        name: 'A photo',
        entity: 'post',
        content: { text: 'look at this', imageUrls: [`${base}/${image}`] },
        ...extra,
      }),
    idOf: (clientId: string) => recordIdFor(tenant.tenantId, clientId),
    record: async (clientId: string) =>
      (await call('GET', `/records/${recordIdFor(tenant.tenantId, clientId)}`)).body.data as {
        moderationStatus: string;
        moderationStatusVia: string;
        reasons: string[];
      },
    events: async (clientId: string) =>
      (await gw.db
        .collection(COLLECTIONS.events)
        .find({ stream: `record-${recordIdFor(tenant.tenantId, clientId)}`, type: 'RecordModerated' })
        .sort({ version: 1 })
        .toArray()) as unknown as StoredEvent[],
  };
}

describe('retroactive matching', () => {
  let stack: ServiceStack;
  let gw: Gateway;
  let receiver: Receiver;
  let api: ReturnType<typeof tenantApi>;
  let bankId: string;

  beforeAll(async () => {
    stack = await startServiceStack({
      name: 'gwhashretro',
      moderatorEnv: { IMAGE_ALLOWED_CIDRS: '127.0.0.0/8', HASH_THREADS: '1', HASH_RETRO_POLL_MS: '500' },
      readyMs: WAIT,
    });
    ({ gw, receiver } = stack);
    const tenant = await gw.newTenant();
    api = tenantApi(gw, tenant);
    const endpoint = await api.call('POST', '/webhook-endpoints', { url: receiver.url, events: ['record.flagged'] });
    expect(endpoint.status).toBe(201);
    const policy = await api.call('POST', '/policies', KNOWN_ABUSE_POLICY);
    expect(policy.status).toBe(201);
    // An enabled bank, still empty: the tenant's images are fetched and hashed from now on.
    const bank = await api.call('POST', '/hash-banks', { name: 'Known', kind: 'pdq', policy: 'known-abuse' });
    expect(bank.status).toBe(201);
    bankId = bank.body.data.id as string;
  }, 120_000);

  afterAll(() => stack?.close());

  it('flags the records moderated before the hash was added, never over a person, and nothing passthrough', async () => {
    // Before: nothing matches, so all are Compliant.
    for (const [clientId, image, extra] of [
      ['early', 'shrink-a-lot.jpg', {}],
      ['reviewed', 'aaa-orig.jpg', {}],
      ['passing', 'aaa-orig.jpg', { passthrough: true }],
    ] as const) {
      const reply = await api.moderate(clientId, image, extra);
      expect(reply.status).toBe(200);
      expect(reply.body.status).toBe('Compliant');
    }
    const decided = await api.call('POST', `/records/${api.idOf('reviewed')}/moderations`, {
      status: 'Compliant',
      reason: 'reviewed: a holiday photo',
    });
    expect(decided.status).toBe(200);

    const added = await api.call('POST', `/hash-banks/${bankId}/hashes`, {
      hashes: [{ hash: ORIGINAL, metadata: { source: 'exchange' } }],
    });
    expect(added.status).toBe(201);
    const hashId = added.body.data[0].id as string;

    const bank = await waitFor(
      async () => {
        const reply = await api.call('GET', `/hash-banks/${bankId}`);
        return reply.body.data.lastRetroPass?.state === 'succeeded' ? reply.body.data : undefined;
      },
      { timeoutMs: WAIT, what: 'the retroactive pass to succeed' },
    );
    expect(bank.lastRetroPass).toMatchObject({
      state: 'succeeded',
      trigger: 'added',
      hashes: 1,
      scanned: 2,
      matched: 2,
      flagged: 1,
      heldByHumans: 1,
      error: null,
    });
    const passId = bank.lastRetroPass.id as string;

    const early = await api.record('early');
    expect(early.moderationStatus).toBe('Flagged');
    expect(early.reasons).toEqual([
      expect.stringMatching(new RegExp(`^Image 1 matched hash bank "Known" \\(${bankId}, pdq distance \\d+\\)$`)),
    ]);
    const [first, retro, ...more] = await api.events('early');
    expect(more).toEqual([]);
    expect(first?.data.status).toBe('Compliant');
    expect(retro).toMatchObject({
      correlationId: passId,
      data: {
        status: 'Flagged',
        previousStatus: 'Compliant',
        via: 'AI',
        hashMatches: [expect.objectContaining({ bankId, bankName: 'Known', hashId, metadata: { source: 'exchange' } })],
        grounds: expect.objectContaining({ policyId: 'known-abuse' }),
      },
    });

    const hook = await waitFor(
      () =>
        receiver.received
          .map((received) => JSON.parse(received.body) as Webhook)
          .find((webhook) => webhook.event === 'record.flagged' && webhook.payload.clientId === 'early'),
      { timeoutMs: WAIT, what: 'the record.flagged webhook of the earlier record' },
    );
    expect(hook.payload.statement).toMatchObject({ policy: { id: 'known-abuse', name: 'Known abuse imagery' } });

    // A person's decision stands; the passthrough record kept no hashes to match.
    expect(await api.record('reviewed')).toMatchObject({
      moderationStatus: 'Compliant',
      moderationStatusVia: 'Manual',
      reasons: ['reviewed: a holiday photo'],
    });
    expect((await api.events('reviewed')).map((event) => event.correlationId)).not.toContain(passId);
    expect((await api.record('passing')).moderationStatus).toBe('Compliant');
    expect(await api.events('passing')).toHaveLength(1);
    const kept = gw.db.collection(COLLECTIONS.recordImageHashes);
    expect(await kept.countDocuments({ _id: api.idOf('passing') as never })).toBe(0);
    expect(await kept.countDocuments({ _id: api.idOf('early') as never })).toBe(1);
  });

  it('suspends the user of a record an exact flag_and_suspend bank matches afterwards, naming the bank', async () => {
    expect((await api.call('PATCH', '/settings', { suspensionThreshold: 5 })).status).toBe(200);
    const bank = await api.call('POST', '/hash-banks', {
      name: 'Exact',
      kind: 'md5',
      policy: 'known-abuse',
      action: 'flag_and_suspend',
    });
    expect(bank.status).toBe(201);
    const exactId = bank.body.data.id as string;
    const user = { clientId: 'u1', email: 'u1@example.com' };
    expect((await api.moderate('member-post', 'small.jpg', { user })).body.status).toBe('Compliant');

    const md5 = createHash('md5')
      .update(readFileSync(path.join(PHOTOS, 'misc-images', 'small.jpg')))
      .digest('hex');
    expect((await api.call('POST', `/hash-banks/${exactId}/hashes`, { hashes: [{ hash: md5 }] })).status).toBe(201);
    await waitFor(
      async () => (await api.call('GET', `/hash-banks/${exactId}`)).body.data.lastRetroPass?.state === 'succeeded',
      { timeoutMs: WAIT, what: 'the exact bank’s pass to succeed' },
    );
    expect(await api.record('member-post')).toMatchObject({
      moderationStatus: 'Flagged',
      reasons: [`Image 1 matched hash bank "Exact" (${exactId}, md5 distance 0)`],
    });
    const userId = userIdFor(api.tenantId, 'u1');
    expect((await api.call('GET', `/users/${userId}`)).body.data.actionStatus).toBe('Suspended');
    const suspended = await gw.db
      .collection(COLLECTIONS.events)
      .findOne({ stream: `user-${userId}`, type: 'UserStatusChanged' });
    expect(suspended?.data).toMatchObject({
      status: 'Suspended',
      via: 'Automation Flagged Record',
      viaRecordId: api.idOf('member-post'),
      reason: `Matched hash bank "Exact" (${exactId}), whose action suspends the user`,
    });
  });
});

describe('a retroactive pass whose moderator is killed', () => {
  const stack = { dbName: uniqueName('gwhashretrokill'), topicPrefix: `${uniqueName('t')}.` };
  // Slow enough to be caught mid-pass (3 records a second), a short lease and poll so the survivor takes over soon.
  const env = {
    IMAGE_ALLOWED_CIDRS: '127.0.0.0/8',
    HASH_THREADS: '1',
    HASH_RETRO_RATE_PER_S: '3',
    HASH_RETRO_BUSY_RATE_PER_S: '3',
    HASH_RETRO_LEASE_MS: '2000',
    HASH_RETRO_POLL_MS: '300',
  };
  let moderators: ServiceProcess[];
  let gw: Gateway;

  beforeAll(async () => {
    moderators = [spawnModerator(stack, env), spawnModerator(stack, env)];
    gw = await startGateway({ moderatorAddress: await grpcAddressOf(moderators[0]!), ...stack });
    await grpcAddressOf(moderators[1]!);
  }, 120_000);

  afterAll(async () => {
    await gw?.close();
    await Promise.all(moderators.map((moderator) => moderator.stop()));
  });

  it('is taken over by the other replica, which finishes it: every record flagged once, none lost', async () => {
    const api = tenantApi(gw, await gw.newTenant());
    const bank = await api.call('POST', '/hash-banks', { name: 'Known', kind: 'pdq' });
    expect(bank.status).toBe(201);
    const bankId = bank.body.data.id as string;
    const clientIds = Array.from({ length: 12 }, (_, n) => `post-${n}`);
    for (const clientId of clientIds)
      expect((await api.moderate(clientId, 'aaa-orig.jpg')).body.status).toBe('Compliant');

    expect((await api.call('POST', `/hash-banks/${bankId}/hashes`, { hashes: [{ hash: ORIGINAL }] })).status).toBe(201);
    const passes = gw.db.collection(COLLECTIONS.hashRetroPasses);
    const running = await waitFor(
      async () => {
        const pass = await passes.findOne({ bankId });
        return pass?.state === 'running' && pass.counts.scanned >= 2 ? pass : undefined;
      },
      { timeoutMs: WAIT, what: 'the pass to be part-way' },
    );
    const holder = moderators.find((moderator) =>
      moderator.logs().some((line) => line.msg === 'hash retro pass started'),
    );
    expect(holder).toBeDefined();
    await holder!.stop('SIGKILL');
    expect(running.counts.scanned).toBeLessThan(clientIds.length);

    const done = await waitFor(
      async () => {
        const pass = await passes.findOne({ bankId });
        return pass?.state === 'succeeded' ? pass : undefined;
      },
      { timeoutMs: WAIT, what: 'the survivor to finish the pass' },
    );
    expect(done.attempt).toBe(2);
    expect(done.counts).toEqual({ scanned: 12, matched: 12, flagged: 12, heldByHumans: 0 });
    for (const clientId of clientIds) {
      const byPass = (await api.events(clientId)).filter((event) => event.correlationId === String(done._id));
      expect(byPass.map((event) => event.data.status)).toEqual(['Flagged']);
    }
  });
});
