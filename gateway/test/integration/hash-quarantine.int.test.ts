import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { COLLECTIONS, recordIdFor } from '@vigil/proto';
import type { Browser } from 'playwright-core';
import { waitFor } from '../../../deploy/test-support';
import { collectErrors, launchBrowser, newContext, signIn } from './console-support';
import { startServiceStack, type Gateway, type ServiceStack } from './harness';

// Flood quarantine end to end: the real moderator and notifier as processes, the gateway in process, Kafka and the
// MongoDB-wire store, the photos served by a local HTTP server, a webhook receiver, and the console's quarantine page in
// headless Chromium. A popular "meme" hash passes its bank's threshold and is quarantined while another hash of the
// same bank keeps flagging. `npm run build` first. Nothing sleeps.
const WAIT = 60_000;

const PHOTOS = path.resolve(__dirname, '../../../moderator/src/engine/images/pdq/fixtures/photos');
/** The reference's PDQ hashes of two fixture photos (fixtures/reference.json), far apart. */
const MEME = 'd8f8f0cee0f4a84f0637022a078f67f0b36e2ed596621e1d33e6339c4e9c9b22'; // bridge-mods/aaa-orig.jpg
const OTHER = '6227401f601ff4ccafcc9fad4b0d95d371a2eb7265a3285234d228ca94deeb2d'; // misc-images/wee.jpg
const THIRD = 'cfb2009ddd21c6dab0046a7745b5984757a8a4535b3377aea2591d32b33ff940'; // labelme-subset/q0122.jpg
const FOURTH = 'b150231ffae4710ffcf4f18bb574b109a576f14bb8543189f8743289f174b109'; // labelme-subset/q2821.jpg
/** A week: the flood window, so that no window boundary falls inside a run (windows are aligned to the epoch). */
const WEEK = 604_800;

let stack: ServiceStack;
let gw: Gateway;
let images: http.Server;
let base: string;
let tenant: { tenantId: string; key: string };
let browser: Browser;

beforeAll(async () => {
  images = http.createServer((req, res) => {
    const file = path.join(PHOTOS, path.normalize(decodeURIComponent(req.url ?? '')).replace(/^(\.\.[/\\])+/, ''));
    if (!file.startsWith(PHOTOS) || !existsSync(file)) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'image/jpeg' }).end(readFileSync(file));
  });
  await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(images.address() as AddressInfo).port}`;
  stack = await startServiceStack({
    name: 'hashflood',
    moderatorEnv: { IMAGE_ALLOWED_CIDRS: '127.0.0.0/8', HASH_THREADS: '1', TENANT_CONFIG_TTL_MS: '0' },
    notifierEnv: () => ({ WEBHOOK_RETRY_SCHEDULE_S: '0.5,1,1' }),
    readyMs: WAIT,
  });
  gw = stack.gw;
  tenant = await gw.newTenant();
  const endpoint = await api('POST', '/webhook-endpoints', {
    url: stack.receiver.url,
    events: ['hash.quarantined', 'record.flagged'],
  });
  expect(endpoint.status).toBe(201);
  browser = await launchBrowser();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stack?.close();
  await new Promise((resolve) => images?.close(resolve));
});

function api(method: string, route: string, body?: unknown) {
  return gw.request(method, `/api/v1${route}`, { key: tenant.key, ...(body !== undefined ? { body } : {}) });
}

const post = (clientId: string, photo: string) =>
  api('POST', '/moderate', {
    clientId,
    name: 'A post',
    entity: 'post',
    content: { text: 'look at this', imageUrls: [`${base}/${photo}`] },
  });
const recordOf = (clientId: string) => recordIdFor(tenant.tenantId, clientId);
const statusOf = async (clientId: string) =>
  (await api('GET', `/records/${recordOf(clientId)}`)).body.data.moderationStatus as string;

interface Webhook {
  event: string;
  id: string;
  payload: Record<string, unknown>;
}
const webhooks = () => stack.receiver.received.map((hook) => JSON.parse(hook.body) as Webhook);

async function hashIdOf(bankId: string, value: string): Promise<string> {
  const page = await api('GET', `/hash-banks/${bankId}/hashes?limit=100`);
  return (page.body.data as { id: string; hash: string }[]).find((hash) => hash.hash === value)!.id;
}

describe('a bank with a flood threshold', () => {
  let bankId: string;
  let meme: string;
  let other: string;

  it('refuses a flood threshold or window out of bounds, naming the field', async () => {
    const zero = await api('POST', '/hash-banks', { name: 'x', kind: 'pdq', flood: { threshold: 0 } });
    expect(zero.status).toBe(400);
    expect((zero.body.error.details as { path: string[] }[]).map((issue) => issue.path.join('.'))).toEqual([
      'flood.threshold',
    ]);
    const short = await api('POST', '/hash-banks', {
      name: 'x',
      kind: 'pdq',
      flood: { threshold: 3, windowSeconds: 5 },
    });
    expect(short.status).toBe(400);
    expect((short.body.error.details as { path: string[] }[]).map((issue) => issue.path.join('.'))).toEqual([
      'flood.windowSeconds',
    ]);
  });

  it('is created with its threshold and window, and shows them', async () => {
    const reply = await api('POST', '/hash-banks', {
      name: 'Memes',
      kind: 'pdq',
      distance: 8,
      flood: { threshold: 3, windowSeconds: WEEK },
    });
    expect(reply.status).toBe(201);
    expect(reply.body.data.flood).toEqual({ threshold: 3, windowSeconds: WEEK });
    bankId = reply.body.data.id as string;
    const added = await api('POST', `/hash-banks/${bankId}/hashes`, {
      hashes: [
        { hash: MEME, metadata: { label: 'meme' } },
        { hash: OTHER, metadata: { label: 'other' } },
      ],
    });
    expect(added.status).toBe(201);
    meme = await hashIdOf(bankId, MEME);
    other = await hashIdOf(bankId, OTHER);
  });

  it('quarantines the meme hash past its threshold while the other hash keeps flagging', async () => {
    for (const clientId of ['meme-1', 'meme-2', 'meme-3']) {
      expect((await post(clientId, 'bridge-mods/aaa-orig.jpg')).body.status).toBe('Flagged');
    }
    // The fourth match passes the threshold: the hash is quarantined and this match, and later ones, are held.
    for (const clientId of ['meme-4', 'meme-5']) {
      const reply = await post(clientId, 'bridge-mods/aaa-orig.jpg');
      expect(reply.status).toBe(200);
      expect(reply.body.status).toBe('Compliant');
    }
    for (const clientId of ['other-1', 'other-2', 'other-3']) {
      expect((await post(clientId, 'misc-images/wee.jpg')).body.status).toBe('Flagged');
    }
    const moderated = await gw.db
      .collection(COLLECTIONS.events)
      .findOne({ stream: `record-${recordOf('meme-4')}`, type: 'RecordModerated' });
    expect(moderated?.data.hashMatches).toEqual([expect.objectContaining({ hashId: meme, quarantined: true })]);
    expect(moderated?.data.reasons).toEqual([]);

    const hook = await waitFor(() => webhooks().find((w) => w.event === 'hash.quarantined'), {
      timeoutMs: WAIT,
      what: 'the hash.quarantined webhook',
    });
    expect(hook.payload).toEqual({
      hashId: meme,
      bank: { id: bankId, name: 'Memes' },
      kind: 'pdq',
      quarantine: 1,
      threshold: 3,
      windowSeconds: WEEK,
      count: 4,
      quarantinedAt: expect.any(String),
    });
    expect(JSON.stringify(hook)).not.toContain(MEME);
    expect(webhooks().filter((w) => w.event === 'hash.quarantined')).toHaveLength(1);
  });

  it('lists the quarantined hash with its held matches, and shows it quarantined in a lookup', async () => {
    const list = await api('GET', '/hash-quarantines');
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([
      {
        hashId: meme,
        bank: { id: bankId, name: 'Memes' },
        kind: 'pdq',
        state: 'quarantined',
        quarantine: 1,
        threshold: 3,
        windowSeconds: WEEK,
        count: 4,
        held: 2,
        overflow: 0,
        since: expect.any(String),
        metadata: { label: 'meme' },
      },
    ]);
    const lookup = await api('POST', '/hashes/lookup', { kind: 'pdq', hash: MEME });
    expect(lookup.body.matches).toEqual([expect.objectContaining({ hashId: meme, quarantined: true })]);
    const otherLookup = await api('POST', '/hashes/lookup', { kind: 'pdq', hash: OTHER });
    expect(otherLookup.body.matches).toEqual([expect.objectContaining({ hashId: other })]);
    expect(otherLookup.body.matches[0].quarantined).toBeUndefined();
  });

  it('applies the held matches on release, skipping a record a person decided, and the hash acts again', async () => {
    const decided = await api('POST', `/records/${recordOf('meme-5')}/moderations`, {
      status: 'Compliant',
      reason: 'reviewed',
    });
    expect(decided.status).toBe(200);
    const released = await api('POST', `/hash-quarantines/${meme}/release`);
    expect(released.status).toBe(200);
    expect(released.body).toEqual({ hashId: meme, released: true, applied: 1, skipped: 1 });
    expect(await statusOf('meme-4')).toBe('Flagged');
    expect(await statusOf('meme-5')).toBe('Compliant');
    const events = (await api('GET', `/records/${recordOf('meme-4')}/events`)).body.data as {
      type: string;
      data: Record<string, unknown>;
    }[];
    expect(events.at(-1)?.data).toMatchObject({
      status: 'Flagged',
      via: 'AI',
      reasons: [expect.stringContaining(`matched hash bank "Memes" (${bankId}`)],
      hashMatches: [expect.objectContaining({ hashId: meme })],
    });
    await waitFor(() => webhooks().find((w) => w.event === 'record.flagged' && w.payload.id === recordOf('meme-4')), {
      timeoutMs: WAIT,
      what: 'the record.flagged webhook of the released match',
    });
    expect((await api('GET', '/hash-quarantines')).body.data).toEqual([]);
    // Released in this window: its matches act until the next one.
    expect((await post('meme-6', 'bridge-mods/aaa-orig.jpg')).body.status).toBe('Flagged');
    expect((await api('POST', `/hash-quarantines/${meme}/release`)).status).toBe(404);
  });

  it('dismisses a quarantine: its held matches are dropped and the hash is disabled', async () => {
    const strict = await api('POST', '/hash-banks', { name: 'Strict', kind: 'pdq', flood: { threshold: 1 } });
    expect(strict.status).toBe(201);
    expect(strict.body.data.flood).toEqual({ threshold: 1, windowSeconds: 3600 });
    const strictId = strict.body.data.id as string;
    expect(
      (await api('PATCH', `/hash-banks/${strictId}`, { flood: { threshold: 1, windowSeconds: WEEK } })).body.data.flood,
    ).toEqual({
      threshold: 1,
      windowSeconds: WEEK,
    });
    await api('POST', `/hash-banks/${strictId}/hashes`, { hashes: [{ hash: THIRD }] });
    const third = await hashIdOf(strictId, THIRD);
    expect((await post('third-1', 'reg-test-input/labelme-subset/q0122.jpg')).body.status).toBe('Flagged');
    expect((await post('third-2', 'reg-test-input/labelme-subset/q0122.jpg')).body.status).toBe('Compliant');
    const dismissed = await api('POST', `/hash-quarantines/${third}/dismiss`);
    expect(dismissed.body).toEqual({ hashId: third, dismissed: true, dropped: 1 });
    const hashes = await api('GET', `/hash-banks/${strictId}/hashes`);
    expect(hashes.body.data).toEqual([expect.objectContaining({ id: third, enabled: false })]);
    expect(await statusOf('third-2')).toBe('Compliant');
    expect((await api('GET', '/hash-quarantines')).body.data).toEqual([]);
    const off = await api('PATCH', `/hash-banks/${strictId}`, { flood: null });
    expect(off.body.data.flood).toBeNull();
  });
});

describe('the console quarantine page', () => {
  it('sets a bank’s flood limit on its page, lists a quarantined hash and releases it with the CSRF token', async () => {
    const bank = await api('POST', '/hash-banks', { name: 'Console memes', kind: 'pdq', distance: 8 });
    const bankId = bank.body.data.id as string;
    await api('POST', `/hash-banks/${bankId}/hashes`, { hashes: [{ hash: FOURTH, metadata: { label: 'console' } }] });
    const hashId = await hashIdOf(bankId, FOURTH);

    const admin = await gw.newMember(tenant.tenantId, 'admin');
    const ctx = await newContext(browser, WAIT);
    const page = await ctx.newPage();
    const errors = collectErrors(page);
    await signIn(page, gw, admin, { from: `/console/hash-banks/${bankId}`, landing: /\/console\/hash-banks\/bnk_/ });
    await page.fill('#flood input[name=threshold]', '1');
    await page.fill('#flood input[name=windowSeconds]', String(WEEK));
    await page.click('#flood button[type=submit]');
    await waitFor(async () => (await api('GET', `/hash-banks/${bankId}`)).body.data.flood !== null, {
      timeoutMs: WAIT,
      what: 'the flood limit set on the bank page',
    });
    expect((await api('GET', `/hash-banks/${bankId}`)).body.data.flood).toEqual({ threshold: 1, windowSeconds: WEEK });

    expect((await post('console-1', 'reg-test-input/labelme-subset/q2821.jpg')).body.status).toBe('Flagged');
    expect((await post('console-2', 'reg-test-input/labelme-subset/q2821.jpg')).body.status).toBe('Compliant');
    expect((await api('GET', '/hash-quarantines')).body.data).toEqual([expect.objectContaining({ hashId, held: 1 })]);

    await page.goto(`${gw.url}/console/hash-quarantine`);
    const row = page.locator(`table.hash-quarantine tr[data-id="${hashId}"]`);
    expect(await row.textContent()).toContain('Console memes');
    expect(await row.textContent()).toContain('label=console');

    // The same form from this origin with the session's cookie but without its CSRF token changes nothing.
    const forged = await page.request.post(`${gw.url}/console/hash-quarantine/${hashId}/release`, {
      form: {},
      headers: { origin: new URL(gw.url).origin },
    });
    expect(forged.status()).toBe(403);
    expect((await api('GET', '/hash-quarantines')).body.data).toHaveLength(1);

    await row.locator('button', { hasText: 'Release' }).click();
    await page.waitForSelector('#empty');
    expect((await api('GET', '/hash-quarantines')).body.data).toEqual([]);
    const events = (await api('GET', `/records/${recordOf('console-2')}/events`)).body.data as {
      data: { hashMatches?: { bankId: string; quarantined?: boolean }[] };
    }[];
    expect(events.at(-1)?.data.hashMatches).toEqual([expect.objectContaining({ bankId })]);
    expect(errors).toEqual([]);
    await ctx.close();
  });
});
