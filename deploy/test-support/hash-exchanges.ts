// Stand-ins for the sources of hash feeds, each an HTTP server on 127.0.0.1 that speaks its protocol as the public
// descriptions have it (docs/hash-banks.md#feeds-and-exchanges), written from those descriptions and not from Vigil's
// clients: a hash file server (ETag and If-None-Match), StopNCII's hash API (FetchHashes with paging and a checkpoint,
// SubmitFeedback, withdrawals as records whose status is Withdrawn) and NCMEC's hash-sharing API (XML entries with
// paging and deleted entries, basic authentication). Each records what it was asked and can be told to fail.
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

interface Listening {
  base: string;
  close(): Promise<void>;
}

async function listen(handler: http.RequestListener): Promise<Listening> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function bodyOf(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export interface HashFileServer extends Listening {
  /** The file's URL. */
  url: string;
  /** What the file holds now (its ETag follows its content). */
  content: string;
  /** Requests answered 500 before the file is served again. */
  failNext: number;
  /** While set, requests are recorded (status 0) and never answered: a fetch in flight when its client dies. */
  hold: boolean;
  /** Every request: its status and the headers that matter. */
  requests: { status: number; ifNoneMatch?: string; authorization?: string }[];
}

/** A hash file at `/hashes.csv`, with a strong ETag of its content: `If-None-Match` with it is answered 304. */
export async function startHashFileServer(content: string): Promise<HashFileServer> {
  const state = { content, failNext: 0, hold: false, requests: [] as HashFileServer['requests'] };
  const listening = await listen((req, res) => {
    const record = (status: number) =>
      state.requests.push({
        status,
        ...(req.headers['if-none-match'] ? { ifNoneMatch: String(req.headers['if-none-match']) } : {}),
        ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
      });
    if (req.url !== '/hashes.csv') return void res.writeHead(404).end();
    if (state.hold) return void record(0);
    if (state.failNext > 0) {
      state.failNext -= 1;
      record(500);
      return void res.writeHead(500).end('upstream trouble');
    }
    const etag = `"${createHash('sha256').update(state.content).digest('hex').slice(0, 16)}"`;
    if (req.headers['if-none-match'] === etag) {
      record(304);
      return void res.writeHead(304, { etag }).end();
    }
    record(200);
    res.writeHead(200, { 'content-type': 'text/csv', etag }).end(state.content);
  });
  return Object.assign(state, listening, { url: `${listening.base}/hashes.csv` });
}

export interface StopNciiRecord {
  signalType: string;
  hashValue: string;
  hashStatus: 'Received' | 'Active' | 'Withdrawn' | 'Deleted';
  lastModtimestamp: number;
}

export interface StopNciiStandIn extends Listening {
  keys: { subscriptionKey: string; fetchFunctionKey: string; feedbackFunctionKey: string };
  /** The hash records; a change to one is a new record state with a later `lastModtimestamp`. */
  records: StopNciiRecord[];
  /** Feedback received: `{ hashValue, feedbackValue, tags }`. */
  feedback: { hashValue: string; feedbackValue: string; tags: string[] }[];
  /** FetchHashes calls: their `startTimestamp` and page token. */
  fetches: { startTimestamp: string; nextPageToken?: string }[];
  /** Sets a hash's status now (a withdrawal is `Withdrawn`). */
  set(hashValue: string, hashStatus: StopNciiRecord['hashStatus'], signalType?: string): void;
}

/**
 * StopNCII's hash API: `GET /FetchHashes?startTimestamp&pageSize[&nextPageToken]` answers the latest state of each hash
 * changed at or after `startTimestamp`, a page at a time, with `nextSetTimestamp` to keep as the checkpoint; `POST
 * /SubmitFeedback` takes `{ count, hashFeedbacks }`. Each call needs `Ocp-Apim-Subscription-Key` and its function's
 * `x-functions-key` (401 otherwise). `pageSize` is capped at 2 here so that paging is exercised.
 */
export async function startStopNcii(): Promise<StopNciiStandIn> {
  const keys = { subscriptionKey: 'sub-key-1', fetchFunctionKey: 'fetch-key-1', feedbackFunctionKey: 'fb-key-1' };
  let clock = 1_700_000_000;
  const state = {
    keys,
    records: [] as StopNciiRecord[],
    feedback: [] as StopNciiStandIn['feedback'],
    fetches: [] as StopNciiStandIn['fetches'],
    set(hashValue: string, hashStatus: StopNciiRecord['hashStatus'], signalType = 'ImagePDQ') {
      clock += 1;
      const at = state.records.findIndex((record) => record.hashValue === hashValue);
      const record = { signalType, hashValue, hashStatus, lastModtimestamp: clock };
      if (at >= 0) state.records.splice(at, 1);
      state.records.push(record);
    },
  };
  const listening = await listen((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const json = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      const authorised = (functionKey: string) =>
        req.headers['ocp-apim-subscription-key'] === keys.subscriptionKey &&
        req.headers['x-functions-key'] === functionKey;
      if (req.method === 'GET' && url.pathname === '/FetchHashes') {
        if (!authorised(keys.fetchFunctionKey)) return json(401, { message: 'Access denied' });
        const start = Number(url.searchParams.get('startTimestamp'));
        const token = url.searchParams.get('nextPageToken') ?? undefined;
        state.fetches.push({ startTimestamp: String(start), ...(token ? { nextPageToken: token } : {}) });
        const size = Math.min(2, Number(url.searchParams.get('pageSize')) || 2);
        const changed = state.records
          .filter((record) => record.lastModtimestamp >= start)
          .sort((a, b) => a.lastModtimestamp - b.lastModtimestamp);
        const from = token ? Number(token) : 0;
        const page = changed.slice(from, from + size);
        const more = from + size < changed.length;
        const last = changed.at(-1)?.lastModtimestamp;
        return json(200, {
          count: page.length,
          nextPageToken: more ? String(from + size) : null,
          nextSetTimestamp: last !== undefined ? last + 1 : start,
          hasMoreRecords: more,
          hashRecords: page.map((record) => ({ ...record, caseNumbers: {}, CSPFeedbacks: [] })),
        });
      }
      if (req.method === 'POST' && url.pathname === '/SubmitFeedback') {
        if (!authorised(keys.feedbackFunctionKey)) return json(401, { message: 'Access denied' });
        const body = JSON.parse(await bodyOf(req)) as { count: number; hashFeedbacks: StopNciiStandIn['feedback'] };
        if (body.count !== body.hashFeedbacks.length) return json(400, { message: 'count mismatch' });
        state.feedback.push(...body.hashFeedbacks);
        return json(200, {});
      }
      json(404, { message: 'not found' });
    })();
  });
  return Object.assign(state, listening);
}

export interface NcmecEntry {
  id: string;
  kind: 'image' | 'video';
  deleted: boolean;
  /** Fingerprints by NCMEC's tag names (`md5`, `pdq`, `sha1`, …). */
  fingerprints: Record<string, string>;
  classification?: string;
  updatedAt: number;
}

export interface NcmecStandIn extends Listening {
  account: { username: string; password: string };
  entries: NcmecEntry[];
  /** Each entries call's query. */
  calls: string[];
  add(entry: Omit<NcmecEntry, 'updatedAt' | 'deleted'>): void;
  remove(id: string): void;
}

const NS = 'https://hashsharing.ncmec.org/hashsharing/v2';
const ENTITIES: Record<string, string> = { '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' };
const escapeXml = (text: string) => text.replace(/[<>&"']/g, (c) => ENTITIES[c]!);

/**
 * NCMEC's hash-sharing API (v2), basic authentication: `GET /v2/entries?from&to` answers, in XML under NCMEC's
 * namespace, the entries updated in the range (`<image>`, `<video>`, and `<deletedImage>` / `<deletedVideo>` for those
 * removed), two a page here, with `<paging><next>` the path of the next page.
 */
export async function startNcmec(): Promise<NcmecStandIn> {
  const account = { username: 'esp-42', password: 'secret-pass' };
  // Entries carry the real time of their last change (seconds), as the ranges the client asks for are real times.
  const clock = () => Math.floor(Date.now() / 1000);
  const state = {
    account,
    entries: [] as NcmecEntry[],
    calls: [] as string[],
    add(entry: Omit<NcmecEntry, 'updatedAt' | 'deleted'>) {
      state.entries = state.entries.filter((other) => other.id !== entry.id);
      state.entries.push({ ...entry, deleted: false, updatedAt: clock() });
    },
    remove(id: string) {
      const entry = state.entries.find((other) => other.id === id);
      if (entry) Object.assign(entry, { deleted: true, updatedAt: clock() });
    },
  };
  const expected = `Basic ${Buffer.from(`${account.username}:${account.password}`).toString('base64')}`;
  const listening = await listen((req, res) => {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    if (req.headers.authorization !== expected) return void res.writeHead(401).end();
    if (req.method !== 'GET' || url.pathname !== '/v2/entries') return void res.writeHead(404).end();
    state.calls.push(url.search);
    const from = Date.parse(url.searchParams.get('from') ?? '');
    const to = Date.parse(url.searchParams.get('to') ?? '');
    if (!Number.isFinite(from) || !Number.isFinite(to)) return void res.writeHead(400).end();
    const inRange = state.entries.filter((entry) => entry.updatedAt * 1000 >= from && entry.updatedAt * 1000 <= to);
    const start = Number(url.searchParams.get('start') ?? 0);
    const page = inRange.slice(start, start + 2);
    const next =
      start + 2 < inRange.length
        ? `/v2/entries?${new URLSearchParams({
            from: url.searchParams.get('from')!,
            to: url.searchParams.get('to')!,
            start: String(start + 2),
            size: '2',
            max: String(inRange.length),
          }).toString()}`
        : undefined;
    const xmlOf = (entry: NcmecEntry) => {
      const tag = entry.deleted ? `deleted${entry.kind === 'image' ? 'Image' : 'Video'}` : entry.kind;
      const prints = Object.entries(entry.fingerprints)
        .map(([name, value]) => `<${name}>${escapeXml(value)}</${name}>`)
        .join('');
      return (
        `<${tag}><id>${escapeXml(entry.id)}</id><member id="7">Some ESP</member>` +
        (entry.classification ? `<classification>${escapeXml(entry.classification)}</classification>` : '') +
        `<fingerprints>${prints}</fingerprints></${tag}>`
      );
    };
    const maxTimestamp = new Date(to).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const group = (name: string, kind: NcmecEntry['kind']) => {
      const items = page.filter((entry) => entry.kind === kind);
      return items.length > 0 ? `<${name} maxTimestamp="${maxTimestamp}">${items.map(xmlOf).join('')}</${name}>` : '';
    };
    const xml =
      `<?xml version="1.0" encoding="UTF-8"?><queryResult xmlns="${NS}">` +
      group('images', 'image') +
      group('videos', 'video') +
      (next ? `<paging><next>${escapeXml(next)}</next></paging>` : '') +
      `</queryResult>`;
    res.writeHead(200, { 'content-type': 'application/xml' }).end(xml);
  });
  return Object.assign(state, listening);
}
