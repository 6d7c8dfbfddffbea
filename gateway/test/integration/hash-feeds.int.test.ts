import { randomBytes } from 'node:crypto';
import { COLLECTIONS } from '@vigil/proto';
import {
  startHashFileServer,
  startNcmec,
  startStopNcii,
  type HashFileServer,
  type NcmecStandIn,
  type StopNciiStandIn,
} from '../../../deploy/test-support/hash-exchanges';
import { uniqueName, waitFor } from '../../../deploy/test-support';
import { startModeratorStack, type Gateway, type ModeratorStack } from './harness';
import { ORIGINAL, startPhotoServer, type PhotoServer } from './hash-support';

// Hash feeds end to end: the real moderator (built dist) runs the feeds against stand-in servers on 127.0.0.1 (a hash
// file server, StopNCII's and NCMEC's APIs), the gateway in process. The moderator polls every 200 ms and retries a
// failed run after 300 ms, so the deadlines below hold on a busy machine. `npm run build` first.

const WAIT = 30_000;
const md5 = (n: number) => n.toString(16).padStart(32, '0');

let stack: ModeratorStack;
let gw: Gateway;
let images: PhotoServer;
let imageBase: string;
let tenant: { tenantId: string; key: string };
let files: HashFileServer;
let stopncii: StopNciiStandIn;
let ncmec: NcmecStandIn;

beforeAll(async () => {
  images = await startPhotoServer(['bridge-mods']);
  imageBase = images.base;
  [files, stopncii, ncmec] = await Promise.all([
    startHashFileServer(`hash,source\n${md5(1)},file\n${md5(2)},file\n`),
    startStopNcii(),
    startNcmec(),
  ]);
  stack = await startModeratorStack({
    name: 'hashfeeds',
    moderatorEnv: {
      IMAGE_ALLOWED_CIDRS: '127.0.0.0/8',
      HASH_THREADS: '1',
      HASH_FEED_ALLOWED_CIDRS: '127.0.0.0/8',
      HASH_FEED_POLL_MS: '200',
      HASH_FEED_RETRY_MS: '300',
      HASH_FEED_MAX_BYTES: '8192',
      SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    },
  });
  gw = stack.gw;
  tenant = await gw.newTenant();
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await Promise.all([files?.close(), stopncii?.close(), ncmec?.close()]);
  await images?.close();
});

const api = (method: string, route: string, body?: unknown) =>
  gw.request(method, `/api/v1${route}`, { key: tenant.key, ...(body !== undefined ? { body } : {}) });

async function newBank(kind: 'pdq' | 'md5'): Promise<string> {
  const reply = await api('POST', '/hash-banks', { name: uniqueName('bank'), kind });
  expect(reply.status).toBe(201);
  return (reply.body.data as { id: string }).id;
}

async function hashesOf(bankId: string): Promise<{ hash: string; metadata: Record<string, string> }[]> {
  const reply = await api('GET', `/hash-banks/${bankId}/hashes?limit=100`);
  return reply.body.data as { hash: string; metadata: Record<string, string> }[];
}

interface FeedView {
  id: string;
  hasCredentials: boolean;
  lastRun: {
    state: string;
    at: string;
    added: number;
    withdrawn: number;
    failure: string | null;
    failures: number;
  } | null;
}

async function feedOf(bankId: string, feedId: string): Promise<FeedView> {
  const reply = await api('GET', `/hash-banks/${bankId}/feeds`);
  return (reply.body.data as FeedView[]).find((feed) => feed.id === feedId)!;
}

/** Waits for a run after `after` (an ISO time, or none) and answers the feed then. */
/** Adds an hourly feed of `source` at `url` to the bank; returns its id. */
async function newFeed(bankId: string, source: string, url: string, credentials: unknown): Promise<string> {
  const created = await api('POST', `/hash-banks/${bankId}/feeds`, { source, url, intervalSeconds: 3600, credentials });
  expect(created.status).toBe(201);
  return (created.body.data as FeedView).id;
}

async function nextRun(bankId: string, feedId: string, after?: string): Promise<FeedView> {
  let seen: FeedView | undefined;
  await waitFor(
    async () => {
      seen = await feedOf(bankId, feedId);
      return seen.lastRun !== null && (after === undefined || seen.lastRun.at > after);
    },
    { timeoutMs: WAIT, what: 'a feed run' },
  );
  return seen!;
}

describe('hash feeds', () => {
  it('a scheduled file feed fetches the file, its hashes match; a changed file adds and withdraws; 304 skips', async () => {
    const bankId = await newBank('md5');
    const created = await api('POST', `/hash-banks/${bankId}/feeds`, {
      source: 'file',
      url: files.url,
      intervalSeconds: 3600,
      credentials: { authorization: 'Bearer file-token' },
    });
    expect(created.status).toBe(201);
    const feed = created.body.data as FeedView & Record<string, unknown>;
    expect(feed).toMatchObject({ source: 'file', url: files.url, intervalSeconds: 3600, hasCredentials: true });
    expect(JSON.stringify(created.body)).not.toContain('file-token');

    const first = await nextRun(bankId, feed.id);
    expect(first.lastRun).toMatchObject({ state: 'ok', added: 2, withdrawn: 0, failure: null });
    expect(files.requests[0]).toMatchObject({ status: 200, authorization: 'Bearer file-token' });
    expect((await hashesOf(bankId)).map((hash) => hash.hash).sort()).toEqual([md5(1), md5(2)]);
    expect((await hashesOf(bankId))[0]!.metadata).toEqual({ source: 'file' });
    const lookup = await api('POST', '/hashes/lookup', { kind: 'md5', hash: md5(2) });
    expect(lookup.body.matches).toEqual([expect.objectContaining({ bank: expect.objectContaining({ id: bankId }) })]);

    // Nothing changed upstream: the file is answered 304 and nothing is written.
    const unchanged = await api('POST', `/hash-banks/${bankId}/feeds/${feed.id}/run`);
    expect(unchanged.status).toBe(202);
    const second = await nextRun(bankId, feed.id, first.lastRun!.at);
    expect(second.lastRun).toMatchObject({ state: 'unchanged', added: 0, withdrawn: 0 });
    expect(files.requests.at(-1)).toMatchObject({ status: 304 });

    // md5(1) left the file and md5(3) came: one added, one withdrawn. A hash added by hand is not the feed's to withdraw.
    await api('POST', `/hash-banks/${bankId}/hashes`, { hashes: [{ hash: md5(9) }] });
    files.content = `${md5(2)}\n${md5(3)}\n`;
    await api('POST', `/hash-banks/${bankId}/feeds/${feed.id}/run`);
    const third = await nextRun(bankId, feed.id, second.lastRun!.at);
    expect(third.lastRun).toMatchObject({ state: 'ok', added: 1, withdrawn: 1 });
    expect((await hashesOf(bankId)).map((hash) => hash.hash).sort()).toEqual([md5(2), md5(3), md5(9)]);
    expect((await api('POST', '/hashes/lookup', { kind: 'md5', hash: md5(1) })).body.matches).toEqual([]);

    // The stored feed holds the credentials sealed, never in clear.
    const stored = await gw.db.collection(COLLECTIONS.hashFeeds).findOne({ _id: feed.id as never });
    expect(JSON.stringify(stored)).not.toContain('file-token');
  });

  it('a failed fetch is reported on the feed, retried with backoff, and a bad or oversized file changes nothing', async () => {
    const bankId = await newBank('md5');
    const server = await startHashFileServer(`${md5(20)}\n`);
    try {
      server.failNext = 2;
      const created = await api('POST', `/hash-banks/${bankId}/feeds`, {
        source: 'file',
        url: server.url,
        intervalSeconds: 3600,
      });
      const feedId = (created.body.data as FeedView).id;
      let failed: FeedView | undefined;
      await waitFor(
        async () => {
          failed = await feedOf(bankId, feedId);
          return failed.lastRun?.state === 'failed';
        },
        { timeoutMs: WAIT, what: 'a failed run' },
      );
      expect(failed!.lastRun).toMatchObject({ failure: 'http_status' });
      expect(failed!.lastRun!.failures).toBeGreaterThanOrEqual(1);
      // Retried after the backoff (not the hour of its interval), without anyone asking.
      await waitFor(async () => (await feedOf(bankId, feedId)).lastRun?.state === 'ok', {
        timeoutMs: WAIT,
        what: 'the retried run',
      });
      expect(server.requests.map((request) => request.status)).toEqual([500, 500, 200]);
      expect((await feedOf(bankId, feedId)).lastRun).toMatchObject({ added: 1, failures: 0 });

      // A file with a bad row: the run fails whole, the bank keeps what it had.
      const ok = (await feedOf(bankId, feedId)).lastRun!.at;
      server.content = `${md5(21)}\nnot-a-hash\n`;
      await api('POST', `/hash-banks/${bankId}/feeds/${feedId}/run`);
      const bad = await nextRun(bankId, feedId, ok);
      expect(bad.lastRun).toMatchObject({ state: 'failed', failure: 'invalid_file' });
      expect((await hashesOf(bankId)).map((hash) => hash.hash)).toEqual([md5(20)]);

      // A file over HASH_FEED_MAX_BYTES (8 KiB here) is not read: too_large, and nothing written.
      server.content = Array.from({ length: 300 }, (_, i) => md5(1000 + i)).join('\n');
      await api('POST', `/hash-banks/${bankId}/feeds/${feedId}/run`);
      const large = await nextRun(bankId, feedId, bad.lastRun!.at);
      expect(large.lastRun).toMatchObject({ state: 'failed', failure: 'too_large' });
      expect((await hashesOf(bankId)).map((hash) => hash.hash)).toEqual([md5(20)]);
    } finally {
      await server.close();
    }
  });

  it('refuses what it cannot run: a URL without https, bad credentials, an interval out of bounds', async () => {
    const bankId = await newBank('md5');
    const post = (body: unknown) => api('POST', `/hash-banks/${bankId}/feeds`, body);
    const plain = await post({ source: 'file', url: 'http://example.com/hashes.csv' });
    expect(plain.status).toBe(400);
    expect(JSON.stringify(plain.body)).toContain('url');
    const metadata = await post({ source: 'file', url: 'https://169.254.169.254/latest' });
    expect(metadata.status).toBe(400);
    const short = await post({ source: 'file', url: files.url, intervalSeconds: 5 });
    expect(short.status).toBe(400);
    expect(JSON.stringify(short.body)).toContain('intervalSeconds');
    const noKeys = await post({ source: 'stopncii', url: stopncii.base });
    expect(noKeys.status).toBe(400);
    expect(JSON.stringify(noKeys.body)).toContain('credentials');
    const missing = await api('POST', `/hash-banks/${bankId}/feeds/fed_00000000000000000000000000/run`);
    expect(missing.status).toBe(404);
  });

  it('StopNCII: hashes fetched page by page, a withdrawal deletes the hash, and a match that acted sends Blocked', async () => {
    const bankId = await newBank('pdq');
    const other = 'ab'.repeat(32);
    stopncii.set(ORIGINAL, 'Active');
    stopncii.set(other, 'Received');
    stopncii.set('cd'.repeat(32), 'Active', 'VideoMD5');
    const feedId = await newFeed(bankId, 'stopncii', stopncii.base, stopncii.keys);
    const first = await nextRun(bankId, feedId);
    expect(first.lastRun).toMatchObject({ state: 'ok', added: 2, withdrawn: 0 });
    // Two pages of two records (the stand-in's page size), read from the first checkpoint.
    expect(stopncii.fetches.slice(0, 2)).toEqual([
      { startTimestamp: '10' },
      { startTimestamp: '10', nextPageToken: '2' },
    ]);
    const held = await hashesOf(bankId);
    expect(held.map((hash) => hash.hash).sort()).toEqual([other, ORIGINAL].sort());
    expect(held[0]!.metadata).toMatchObject({ source: 'stopncii', feed: feedId, signalType: 'ImagePDQ' });

    // A withdrawal upstream: the next run (from the stored checkpoint) deletes the hash.
    stopncii.set(other, 'Withdrawn');
    await api('POST', `/hash-banks/${bankId}/feeds/${feedId}/run`);
    const second = await nextRun(bankId, feedId, first.lastRun!.at);
    expect(second.lastRun).toMatchObject({ state: 'ok', added: 0, withdrawn: 1 });
    expect(Number(stopncii.fetches.at(-1)!.startTimestamp)).toBeGreaterThan(10);
    expect((await hashesOf(bankId)).map((hash) => hash.hash)).toEqual([ORIGINAL]);

    // A record whose image matches the StopNCII hash is flagged, and StopNCII hears `Blocked` for that hash.
    const moderated = await api('POST', '/moderate', {
      clientId: uniqueName('post'),
      name: 'A photo',
      entity: 'post',
      content: { text: 'look', imageUrls: [`${imageBase}/aaa-orig.jpg`] },
    });
    expect(moderated.body.status).toBe('Flagged');
    await waitFor(() => stopncii.feedback.length > 0, { timeoutMs: WAIT, what: 'StopNCII feedback' });
    expect(stopncii.feedback).toEqual([{ hashValue: ORIGINAL, feedbackValue: 'Blocked', tags: [] }]);
  });

  it('NCMEC: entries fetched page by page with basic authentication, a deleted entry withdraws its hash', async () => {
    const bankId = await newBank('md5');
    ncmec.add({ id: 'e1', kind: 'image', fingerprints: { md5: md5(101).toUpperCase(), sha1: 'ff'.repeat(20) } });
    ncmec.add({ id: 'e2', kind: 'image', fingerprints: { md5: md5(102) }, classification: 'A1' });
    ncmec.add({ id: 'e3', kind: 'video', fingerprints: { md5: md5(103) } });
    ncmec.add({ id: 'e4', kind: 'image', fingerprints: { pdq: 'ef'.repeat(32) } });
    const feedId = await newFeed(bankId, 'ncmec', ncmec.base, ncmec.account);
    const first = await nextRun(bankId, feedId);
    expect(first.lastRun).toMatchObject({ state: 'ok', added: 3, withdrawn: 0 });
    expect(ncmec.calls.length).toBe(2);
    const held = await hashesOf(bankId);
    expect(held.map((hash) => hash.hash).sort()).toEqual([md5(101), md5(102), md5(103)]);
    expect(held.find((hash) => hash.hash === md5(102))!.metadata).toEqual({
      source: 'ncmec',
      feed: feedId,
      entry: 'e2',
      member: '7',
      classification: 'A1',
    });

    ncmec.remove('e1');
    await api('POST', `/hash-banks/${bankId}/feeds/${feedId}/run`);
    const second = await nextRun(bankId, feedId, first.lastRun!.at);
    expect(second.lastRun).toMatchObject({ state: 'ok', withdrawn: 1 });
    expect((await hashesOf(bankId)).map((hash) => hash.hash).sort()).toEqual([md5(102), md5(103)]);
  });
});
