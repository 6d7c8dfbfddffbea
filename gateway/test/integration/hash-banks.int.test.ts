import { COLLECTIONS, recordIdFor, userIdFor } from '@vigil/proto';
import { startModeratorStack, type Gateway, type ModeratorStack } from './harness';
import { KNOWN_ABUSE_POLICY, ORIGINAL, startPhotoServer, type PhotoServer } from './hash-support';

// Hash banks end to end: the real moderator (built dist, with its hash worker pool) and the gateway in process, the
// images served by a local HTTP server. `npm run build` first.

/** The reference's PDQ hash of `bridge-mods/shrink-a-lot.jpg` (fixtures/reference.json). */
const SHRUNK = 'd0f8f1ccc0f4a84d0a370a3a228f67f0b36e2ed5b6623e1d33e6339c4e9c9b22';

/** Bits in which two hex hashes differ. */
function distance(a: string, b: string): number {
  let bits = 0;
  for (let i = 0; i < a.length; i++) {
    let x = Number.parseInt(a[i]!, 16) ^ Number.parseInt(b[i]!, 16);
    while (x) {
      bits += x & 1;
      x >>= 1;
    }
  }
  return bits;
}

let stack: ModeratorStack;
let gw: Gateway;
let images: PhotoServer;
let base: string;
let tenant: { tenantId: string; key: string };

beforeAll(async () => {
  images = await startPhotoServer(['bridge-mods']);
  base = images.base;
  stack = await startModeratorStack({
    name: 'hashbanks',
    moderatorEnv: { IMAGE_ALLOWED_CIDRS: '127.0.0.0/8', HASH_THREADS: '1' },
  });
  gw = stack.gw;
  tenant = await gw.newTenant();
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await images?.close();
});

const api = (method: string, route: string, body?: unknown) =>
  gw.request(method, `/api/v1${route}`, { key: tenant.key, ...(body !== undefined ? { body } : {}) });

async function newBank(body: Record<string, unknown>): Promise<string> {
  const reply = await api('POST', '/hash-banks', body);
  expect(reply.status).toBe(201);
  return reply.body.data.id as string;
}

describe('hash banks', () => {
  let bankId: string;
  let hashId: string;

  it('creates a PDQ bank with its policy, HMA’s default distance and the flag action', async () => {
    const policy = await api('POST', '/policies', KNOWN_ABUSE_POLICY);
    expect(policy.status).toBe(201);
    const reply = await api('POST', '/hash-banks', { name: 'Known', kind: 'pdq', policy: 'known-abuse' });
    expect(reply.status).toBe(201);
    expect(reply.body.data).toEqual(
      expect.objectContaining({
        name: 'Known',
        kind: 'pdq',
        distance: 31,
        policy: 'known-abuse',
        action: 'flag',
        negative: false,
        enabled: true,
      }),
    );
    bankId = reply.body.data.id as string;
    expect((await api('GET', '/hash-banks')).body.data).toEqual([reply.body.data]);
  });

  it('refuses a bank or a hash out of bounds with validation errors that name the field', async () => {
    const bad = await api('POST', '/hash-banks', { name: 'x', kind: 'phash', distance: 64 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('validation_error');
    const paths = (bad.body.error.details as { path: string[] }[]).map((issue) => issue.path.join('.')).sort();
    expect(paths).toEqual(['distance', 'kind']);
    const policy = await api('POST', '/hash-banks', { name: 'x', kind: 'md5', policy: 'nope' });
    expect(policy.status).toBe(400);
    expect(policy.body.error.details).toEqual([{ path: ['policyId'], message: 'no such policy' }]);
    const md5InPdq = await api('POST', `/hash-banks/${bankId}/hashes`, { hashes: [{ hash: 'a'.repeat(32) }] });
    expect(md5InPdq.status).toBe(400);
    expect(md5InPdq.body.error.details).toEqual([
      { path: ['hashes', 0, 'value'], message: 'not a pdq hash (64 hex digits)' },
    ]);
    expect((await api('GET', '/hash-banks/bnk_00000000000000000000000000')).status).toBe(404);
  });

  it('adds a hash with its metadata, once', async () => {
    const body = { hashes: [{ hash: ORIGINAL.toUpperCase(), metadata: { source: 'fixture', case: '42' } }] };
    const reply = await api('POST', `/hash-banks/${bankId}/hashes`, body);
    expect(reply.status).toBe(201);
    expect(reply.body).toEqual({
      data: [
        expect.objectContaining({ hash: ORIGINAL, metadata: { source: 'fixture', case: '42' }, review: 'unreviewed' }),
      ],
      duplicates: 0,
    });
    hashId = reply.body.data[0].id as string;
    const again = await api('POST', `/hash-banks/${bankId}/hashes`, body);
    expect(again.body).toEqual({ data: [], duplicates: 1 });
  });

  it('imports HMA’s CSV and names each bad row by its line', async () => {
    const csv = `hash,source\n${'1'.repeat(64)},feed\nnot-a-hash,feed\n${'2'.repeat(63)}\n`;
    const bad = await api('POST', `/hash-banks/${bankId}/hashes/import`, { csv });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([
      { path: ['csv', 3], message: 'line 3: not a pdq hash (64 hex digits)' },
      { path: ['csv', 4], message: 'line 4: not a pdq hash (64 hex digits)' },
    ]);
    const good = await api('POST', `/hash-banks/${bankId}/hashes/import`, {
      csv: `hash,source\n${'1'.repeat(64)},feed\n${'3'.repeat(64)},feed\n`,
    });
    expect(good.status).toBe(201);
    expect(good.body.data.map((hash: { metadata: unknown }) => hash.metadata)).toEqual([
      { source: 'feed' },
      { source: 'feed' },
    ]);
    const page = await api('GET', `/hash-banks/${bankId}/hashes?limit=2`);
    expect(page.body.data).toHaveLength(2);
    expect(page.body.has_more).toBe(true);
  });

  it('flags a record whose image matches, naming bank, distance and metadata, and keeps its hashes on the record', async () => {
    const reply = await api('POST', '/moderate', {
      clientId: 'post-1',
      name: 'A photo',
      entity: 'post',
      content: { text: 'look at this', imageUrls: [`${base}/shrink-a-lot.jpg`] },
    });
    expect(reply.status).toBe(200);
    const expected = distance(ORIGINAL, SHRUNK);
    expect(expected).toBeGreaterThan(0);
    expect(reply.body.status).toBe('Flagged');
    expect(reply.body.reasons).toEqual([`Image 1 matched hash bank "Known" (${bankId}, pdq distance ${expected})`]);

    const recordId = recordIdFor(tenant.tenantId, 'post-1');
    const events = await api('GET', `/records/${recordId}/events`);
    const moderated = (events.body.data as { type: string; data: Record<string, unknown> }[]).find(
      (event) => event.type === 'RecordModerated',
    );
    expect(moderated?.data.hashMatches).toEqual([
      {
        position: 1,
        bankId,
        bankName: 'Known',
        kind: 'pdq',
        distance: expected,
        hashId,
        metadata: { source: 'fixture', case: '42' },
        action: 'flag',
        policyId: 'known-abuse',
      },
    ]);
    expect(moderated?.data.grounds).toEqual(expect.objectContaining({ policyId: 'known-abuse' }));
    const record = await gw.db.collection(COLLECTIONS.records).findOne({ _id: recordId as never });
    expect(record?.imageHashes).toEqual([
      expect.objectContaining({ position: 1, pdq: SHRUNK, md5: 'ff69743ddd2435867fc634a47369bd31' }),
    ]);
  });

  it('keeps no image hashes for a passthrough record', async () => {
    const reply = await api('POST', '/moderate', {
      clientId: 'post-2',
      name: 'A photo',
      entity: 'post',
      content: { text: 'look', imageUrls: [`${base}/aaa-orig.jpg`] },
      passthrough: true,
    });
    expect(reply.body.status).toBe('Flagged');
    const stored = JSON.stringify(
      await gw.db
        .collection(COLLECTIONS.events)
        .find({ stream: `record-${recordIdFor(tenant.tenantId, 'post-2')}` })
        .toArray(),
    );
    expect(stored).toContain('hashMatches');
    expect(stored).not.toContain('imageHashes');
    expect(stored).not.toContain(ORIGINAL);
  });

  it('looks a hash or an image up without storing a record', async () => {
    const before = await gw.db.collection(COLLECTIONS.records).countDocuments({});
    const byHash = await api('POST', '/hashes/lookup', { kind: 'pdq', hash: SHRUNK });
    expect(byHash.status).toBe(200);
    expect(byHash.body).toEqual({
      image: null,
      matches: [
        {
          image: 0,
          bank: { id: bankId, name: 'Known' },
          kind: 'pdq',
          distance: distance(ORIGINAL, SHRUNK),
          hashId,
          metadata: { source: 'fixture', case: '42' },
          action: 'flag',
          policy: 'known-abuse',
        },
      ],
      cancelled: [],
      failure: null,
    });
    const byImage = await api('POST', '/hashes/lookup', { imageUrl: `${base}/aaa-orig.jpg` });
    expect(byImage.body.image).toEqual(expect.objectContaining({ pdq: ORIGINAL, pdqQuality: 100 }));
    expect(byImage.body.matches).toEqual([expect.objectContaining({ hashId, distance: 0 })]);
    const missing = await api('POST', '/hashes/lookup', { imageUrl: `${base}/missing.jpg` });
    expect(missing.body).toEqual({ image: null, matches: [], cancelled: [], failure: 'http_status' });
    expect(await gw.db.collection(COLLECTIONS.records).countDocuments({})).toBe(before);
  });

  it('cancels the matches a negative bank covers', async () => {
    const allow = await newBank({ name: 'Allowed', kind: 'pdq', distance: 8, negative: true });
    const added = await api('POST', `/hash-banks/${allow}/hashes`, { hashes: [{ hash: ORIGINAL }] });
    expect(added.status).toBe(201);
    const lookup = await api('POST', '/hashes/lookup', { kind: 'pdq', hash: ORIGINAL });
    expect(lookup.body.matches).toEqual([]);
    expect(lookup.body.cancelled).toEqual([expect.objectContaining({ hashId, cancelledBy: added.body.data[0].id })]);
    expect((await api('DELETE', `/hash-banks/${allow}`)).body).toEqual({ id: allow, deleted: true });
    const after = await api('POST', '/hashes/lookup', { kind: 'pdq', hash: ORIGINAL });
    expect(after.body.matches).toEqual([expect.objectContaining({ hashId })]);
  });

  it('stops matching a deconfirmed hash, and again once confirmed', async () => {
    const deconfirmed = await api('PATCH', `/hash-banks/${bankId}/hashes/${hashId}`, { review: 'deconfirmed' });
    expect(deconfirmed.body.data.review).toBe('deconfirmed');
    expect((await api('POST', '/hashes/lookup', { kind: 'pdq', hash: ORIGINAL })).body.matches).toEqual([]);
    await api('PATCH', `/hash-banks/${bankId}/hashes/${hashId}`, { review: 'confirmed' });
    expect((await api('POST', '/hashes/lookup', { kind: 'pdq', hash: ORIGINAL })).body.matches).toHaveLength(1);
  });

  it('withdraws a hash: no match from the next call on, and no copy left in the store', async () => {
    const reply = await api('DELETE', `/hash-banks/${bankId}/hashes/${hashId}`);
    expect(reply.body).toEqual({ id: hashId, withdrawn: true });
    expect((await api('POST', '/hashes/lookup', { kind: 'pdq', hash: ORIGINAL })).body.matches).toEqual([]);
    const moderated = await api('POST', '/moderate', {
      clientId: 'post-3',
      name: 'A photo',
      entity: 'post',
      content: { text: 'look', imageUrls: [`${base}/aaa-orig.jpg`] },
    });
    expect(moderated.body.status).toBe('Compliant');
    const banksStore = JSON.stringify(
      await Promise.all(
        [COLLECTIONS.hashBanks, COLLECTIONS.bankHashes, COLLECTIONS.hashBankChanges, COLLECTIONS.hashBankHeads].map(
          (name) => gw.db.collection(name).find({}).toArray(),
        ),
      ),
    );
    expect(banksStore).toContain('1'.repeat(64));
    expect(banksStore).not.toContain(ORIGINAL);
    expect((await api('DELETE', `/hash-banks/${bankId}/hashes/${hashId}`)).status).toBe(404);
  });

  it('is the tenant’s own: another tenant sees no bank and no match', async () => {
    const other = await gw.newTenant();
    const list = await gw.request('GET', '/api/v1/hash-banks', { key: other.key });
    expect(list.body.data).toEqual([]);
    const get = await gw.request('GET', `/api/v1/hash-banks/${bankId}`, { key: other.key });
    expect(get.status).toBe(404);
    const lookup = await gw.request('POST', '/api/v1/hashes/lookup', {
      key: other.key,
      body: { kind: 'pdq', hash: '1'.repeat(64) },
    });
    expect(lookup.body.matches).toEqual([]);
  });
});

describe("a flag_and_suspend bank's match", () => {
  let other: { tenantId: string; key: string };
  const call = (method: string, route: string, body?: unknown) =>
    gw.request(method, `/api/v1${route}`, { key: other.key, ...(body !== undefined ? { body } : {}) });
  const userId = () => userIdFor(other.tenantId, 'u1');
  const statusOf = async () => (await call('GET', `/users/${userId()}`)).body.data.actionStatus as string | null;
  const statusEvents = async () =>
    (await gw.db
      .collection(COLLECTIONS.events)
      .find({ stream: `user-${userId()}`, type: 'UserStatusChanged' })
      .sort({ version: 1 })
      .toArray()) as unknown as { data: Record<string, unknown> }[];
  const post = (clientId: string, text: string, imageUrls: string[] = []) =>
    call('POST', '/moderate', {
      clientId,
      name: 'A post',
      entity: 'post',
      content: { text, imageUrls },
      user: { clientId: 'u1', email: 'u1@example.com' },
    });
  const decideRecord = (clientId: string, status: 'Flagged' | 'Compliant') =>
    call('POST', `/records/${recordIdFor(other.tenantId, clientId)}/moderations`, { status, reason: 'reviewed' });
  let bank: string;

  beforeAll(async () => {
    other = await gw.newTenant();
    expect((await call('PATCH', '/settings', { suspensionThreshold: 5 })).status).toBe(200);
    const policy = await call('POST', '/policies', KNOWN_ABUSE_POLICY);
    expect(policy.status).toBe(201);
    const created = await call('POST', '/hash-banks', {
      name: 'Exchange',
      kind: 'pdq',
      policy: 'known-abuse',
      action: 'flag_and_suspend',
    });
    expect(created.status).toBe(201);
    bank = created.body.data.id as string;
    expect((await call('POST', `/hash-banks/${bank}/hashes`, { hashes: [{ hash: ORIGINAL }] })).status).toBe(201);
  });

  it('suspends the user under the threshold, naming the bank and resting on its policy', async () => {
    expect((await post('bank-1', 'look', [`${base}/shrink-a-lot.jpg`])).body.status).toBe('Flagged');
    expect(await statusOf()).toBe('Suspended');
    const [suspended] = await statusEvents();
    expect(suspended?.data).toMatchObject({
      status: 'Suspended',
      via: 'Automation Flagged Record',
      viaRecordId: recordIdFor(other.tenantId, 'bank-1'),
      reason: `Matched hash bank "Exchange" (${bank}), whose action suspends the user`,
      grounds: expect.objectContaining({ policyId: 'known-abuse', legalGround: 'Penal code §184b' }),
    });
    const moderated = await gw.db
      .collection(COLLECTIONS.events)
      .findOne({ stream: `record-${recordIdFor(other.tenantId, 'bank-1')}`, type: 'RecordModerated' });
    expect(moderated?.data.suspendsUser).toMatchObject({ bankId: bank, bankName: 'Exchange' });
  });

  it('is not undone by a reconcile that finds the user under the threshold', async () => {
    expect((await post('text-1', 'plain words')).body.status).toBe('Compliant');
    expect((await decideRecord('text-1', 'Flagged')).status).toBe(200);
    expect((await decideRecord('text-1', 'Compliant')).status).toBe(200);
    expect(await statusOf()).toBe('Suspended');
    expect(await statusEvents()).toHaveLength(1);
  });

  it('reinstates the user once a person clears the matched record', async () => {
    expect((await decideRecord('bank-1', 'Compliant')).status).toBe(200);
    expect(await statusOf()).toBe('Compliant');
    expect((await statusEvents()).at(-1)?.data).toMatchObject({ status: 'Compliant', via: 'Automation All Compliant' });
  });
});
