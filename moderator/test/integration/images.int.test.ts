import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { crc32 } from 'node:zlib';
import { type Rule, type RuleSet, type Strategy } from '@vigil/proto/rules';
import sharp from 'sharp';
import { createEngine, ImageFetcher, OffLoopPool, workerFile, type ImageOptions } from '../../src/engine';
import type { EngineInput } from '../../src/engine';
import { imageOptions } from './image-support';
import {
  fetchImages,
  judgeFetched,
  judgeImages,
  VerdictCache,
  type ImageOutcome,
} from '../../src/engine/images/judge-images';

// The real bundled model (nsfwjs MobileNetV2Mid on TensorFlow.js's WebAssembly backend) in the built image worker
// (dist/engine/image-worker.js): `npm run build` first. Images are made here and served from a local server.

const CLASSES = ['Drawing', 'Hentai', 'Neutral', 'Porn', 'Sexy'];

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A PNG whose header announces 100,000 × 100,000 pixels (a decompression bomb's header), with almost no data. */
function bombHeader(): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(100_000, 0);
  header.writeUInt32BE(100_000, 4);
  header.writeUInt8(8, 8); // bit depth
  header.writeUInt8(2, 9); // truecolour
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', Buffer.from([0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

let server: http.Server;
let base: string;
let solid: Buffer;
let noise: Buffer;
const held: http.ServerResponse[] = [];

beforeAll(async () => {
  solid = await sharp({ create: { width: 320, height: 240, channels: 3, background: { r: 30, g: 140, b: 220 } } })
    .png()
    .toBuffer();
  const random = Buffer.alloc(256 * 256 * 3);
  for (let i = 0; i < random.length; i += 1) random[i] = (i * 7919 + (i >> 5) * 104729) % 256;
  noise = await sharp(random, { raw: { width: 256, height: 256, channels: 3 } })
    .jpeg()
    .toBuffer();
  const bomb = bombHeader();
  server = http.createServer((req, res) => {
    const send = (type: string, body: Buffer) => res.writeHead(200, { 'content-type': type }).end(body);
    switch (new URL(req.url ?? '/', 'http://localhost').pathname) {
      case '/solid.png':
        return send('image/png', solid);
      case '/noise.jpg':
        return send('image/jpeg', noise);
      case '/bomb.png':
        return send('image/png', bomb);
      case '/truncated.png':
        return send('image/png', solid.subarray(0, Math.floor(solid.length / 2)));
      case '/page.html':
        return send('text/html', Buffer.from('<p>not an image</p>'));
      case '/announced-large.png':
        return res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(50 * 1024 * 1024) }).end();
      case '/streamed-large.png': {
        res.writeHead(200, { 'content-type': 'image/png' });
        const piece = Buffer.alloc(64 * 1024);
        for (let i = 0; i < 40; i += 1) res.write(piece);
        return res.end();
      }
      case '/redirect.png':
        return res.writeHead(302, { location: '/solid.png' }).end();
      case '/slow.png':
        held.push(res);
        return res.writeHead(200, { 'content-type': 'image/png' });
      default:
        return res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

const pools: OffLoopPool[] = [];
const fetchers: ImageFetcher[] = [];
let imagePool: OffLoopPool;
let scheduling: string | undefined;

beforeAll(async () => {
  imagePool = new OffLoopPool({
    filename: workerFile('image-worker'),
    threads: 1,
    tenantThreads: 1,
    maxQueuedPerTenant: 100,
    workerData: { model: 'MobileNetV2Mid', schedIdle: true },
  });
  pools.push(imagePool);
  const ready = await imagePool.run<{ scheduling: string }>('ready', 'ready', {}, { budgetMs: 5 * 60_000 });
  scheduling = ready.ok ? ready.value.scheduling : undefined;
}, 5 * 60_000);

afterAll(async () => {
  for (const res of held) res.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await Promise.all([...pools.map((pool) => pool.close()), ...fetchers.map((fetcher) => fetcher.close())]);
});

const options = (overrides: Partial<ImageOptions> & { allowLoopback?: boolean } = {}): ImageOptions =>
  imageOptions(fetchers, imagePool, overrides);

function record(imageUrls: string[]): EngineInput {
  return { entity: 'post', name: '', text: 'hello', imageUrls, externalUrls: [], tenantId: 'tenant-a' };
}

function rules(strategy: Strategy): RuleSet {
  const rule: Rule = { id: 'images', name: 'Images', enabled: true, entities: [], strategies: [strategy] };
  return { rules: [rule] };
}

/** Each thread of this process and its scheduling policy (Linux: field 41 of /proc/self/task/<tid>/stat; 5 is SCHED_IDLE). */
function threadPolicies(): { tid: number; policy: number }[] {
  return readdirSync('/proc/self/task').flatMap((tid) => {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      return [{ tid: Number(tid), policy: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[38]) }];
    } catch {
      return [];
    }
  });
}

const SCHED_IDLE = 5;

describe('images judged by the bundled model', () => {
  it('runs the image thread under SCHED_IDLE, and no other thread of the process', () => {
    expect(scheduling).toBe('idle');
    const policies = threadPolicies();
    const idle = policies.filter((thread) => thread.policy === SCHED_IDLE);
    expect(idle.length).toBeGreaterThanOrEqual(1);
    expect(policies.find((thread) => thread.tid === process.pid)?.policy).toBe(0);
    expect(idle.length).toBeLessThan(policies.length);
  });

  it('scores every class of a solid colour and of noise with probabilities that sum to 1', async () => {
    const verdicts = await judgeImages([`${base}/solid.png`, `${base}/noise.jpg`], 't', options());
    expect(verdicts.map((verdict) => verdict.position)).toEqual([1, 2]);
    for (const verdict of verdicts) {
      expect(Object.keys(verdict.scores ?? {}).sort()).toEqual(CLASSES);
      const values = Object.values(verdict.scores ?? {});
      for (const value of values) expect(value).toBeGreaterThanOrEqual(0);
      expect(values.reduce((sum, value) => sum + value, 0)).toBeCloseTo(1, 3);
    }
  });

  it('flags by per-class threshold and names the image by position and class, never by URL', async () => {
    const engine = createEngine({ images: options() });
    const url = `${base}/solid.png`;
    const flagged = await engine.moderate(
      record([url]),
      rules({ type: 'images', thresholds: { Neutral: 0, Porn: 0.99 }, onFetchError: 'ignore' }),
    );
    expect(flagged.status).toBe('Flagged');
    expect(flagged.reasons).toEqual([expect.stringMatching(/^Image 1 classified as Neutral \(\d\.\d\d\)$/)]);
    expect(JSON.stringify(flagged)).not.toContain(base);

    const passed = await engine.moderate(
      record([url]),
      rules({
        type: 'images',
        thresholds: { Drawing: 1, Hentai: 1, Neutral: 1, Porn: 1, Sexy: 1 },
        onFetchError: 'ignore',
      }),
    );
    expect(passed).toMatchObject({ status: 'Compliant', reasons: [], rules: [] });
    // Under every threshold, the image's class scores are still kept with the moderation.
    expect(passed.images).toEqual([{ position: 1, scores: expect.objectContaining({ Neutral: expect.any(Number) }) }]);
    expect(Object.keys(passed.images?.[0]?.scores ?? {}).sort()).toEqual(CLASSES);
  });

  it('judges the same bytes once while their verdict is cached, whatever the URL; failures and other bytes are judged', async () => {
    const cache = new VerdictCache({ max: 10, ttlMs: 60_000 });
    const outcomes: ImageOutcome[] = [];
    const base0 = options();
    const cached: ImageOptions = {
      ...base0,
      model: { ...base0.model!, cache },
      onImage: (outcome) => outcomes.push(outcome),
    };
    const [first] = await judgeImages([`${base}/solid.png`], 't', cached);
    expect(outcomes).toEqual(['fetched', 'judged']);
    const [again] = await judgeImages([`${base}/solid.png?another-url`], 't', cached);
    expect(outcomes).toEqual(['fetched', 'judged', 'fetched', 'cached']);
    expect(again).toEqual(first);
    expect(cache.size).toBe(1);

    outcomes.length = 0;
    await judgeImages([`${base}/noise.jpg`, `${base}/truncated.png`], 't', cached);
    expect(outcomes.filter((outcome) => outcome !== 'fetched').sort()).toEqual(['judged', 'undecodable']);
    await judgeImages([`${base}/truncated.png`], 't', cached);
    expect(outcomes.at(-1)).toBe('undecodable');
    expect(cache.size).toBe(2);
  });

  it.each([
    ['a decompression bomb, refused from its header', '/bomb.png', 'too_many_pixels'],
    ['a truncated file', '/truncated.png', 'undecodable'],
    ['a page served as text/html', '/page.html', 'not_an_image'],
    ['an announced 50 MB body', '/announced-large.png', 'too_large'],
    ['a body that grows past the byte limit', '/streamed-large.png', 'too_large'],
    ['a redirect (never followed)', '/redirect.png', 'http_status'],
    ['a missing image', '/missing.png', 'http_status'],
  ])('gives %s a reason instead of scores', async (_what, path, failure) => {
    const [verdict] = await judgeImages([`${base}${path}`], 't', options());
    expect(verdict).toEqual({ position: 1, failure });
  });

  it('stops a fetch that does not finish within the record’s fetch time', async () => {
    const [verdict] = await judgeImages([`${base}/slow.png`], 't', options({ fetchTimeoutMs: 300 }));
    expect(verdict).toEqual({ position: 1, failure: 'timeout' });
  });

  it('gives up on an image not judged by the time the caller waits for, with a timeout, not an error', async () => {
    const opts = options();
    const samples = await fetchImages([`${base}/solid.png`], opts);
    expect(samples[0]?.fetched.ok).toBe(true);
    // Due already: the task is dropped before it runs (or its verdict unused), and the image is a timeout.
    const verdicts = await judgeFetched(samples, 't', opts, undefined, false, Date.now() - 1);
    expect(verdicts).toEqual([{ position: 1, failure: 'timeout' }]);
    // With time left, the same image is judged.
    const again = await fetchImages([`${base}/solid.png`], opts);
    const [judged] = await judgeFetched(again, 't', opts, undefined, false, Date.now() + 60_000);
    expect(judged?.scores).toBeDefined();
  });

  it('ends the fetch by the time the caller waits for, when that comes before the fetch time', async () => {
    const [sample] = await fetchImages(
      [`${base}/slow.png`],
      options({ fetchTimeoutMs: 60_000 }),
      undefined,
      Date.now() + 300,
    );
    expect(sample?.fetched).toEqual({ ok: false, failure: 'timeout' });
  });

  it.each([
    ['loopback by address', (port: string) => `http://127.0.0.1:${port}/solid.png`],
    ['loopback by name', (port: string) => `http://localhost:${port}/solid.png`],
    ['loopback as an IPv4-mapped IPv6 literal', (port: string) => `http://[::ffff:127.0.0.1]:${port}/solid.png`],
    ['the cloud metadata address', () => 'http://169.254.169.254/latest/meta-data/'],
    ['a private address', () => 'http://10.0.0.1/x.png'],
    ['credentials in the URL', (port: string) => `http://user:pass@127.0.0.1:${port}/solid.png`],
  ])('refuses %s under the webhook address policy', async (_what, url) => {
    const port = base.split(':').at(-1) ?? '';
    const [verdict] = await judgeImages([url(port)], 't', options({ allowLoopback: false }));
    expect(verdict).toEqual({ position: 1, failure: 'refused' });
  });

  it('refuses a non-http scheme', async () => {
    const [verdict] = await judgeImages(['file:///etc/passwd'], 't', options());
    expect(verdict).toEqual({ position: 1, failure: 'invalid_url' });
  });

  it('flags an image that could not be judged only when the strategy asks', async () => {
    const engine = createEngine({ images: options() });
    const input = record([`${base}/solid.png`, `${base}/page.html`]);
    const strict = await engine.moderate(input, rules({ type: 'images', thresholds: {}, onFetchError: 'flag' }));
    expect(strict.reasons).toEqual(['Image 2 could not be judged (not_an_image): flagged for review']);
    const lenient = await engine.moderate(input, rules({ type: 'images', thresholds: {}, onFetchError: 'ignore' }));
    expect(lenient.status).toBe('Compliant');
  });

  it('judges at most the configured number of images, the same ones every time', async () => {
    const urls = Array.from({ length: 6 }, (_, index) => `${base}/solid.png?copy=${index}`);
    const first = await judgeImages(urls, 't', options({ maxPerRecord: 2 }));
    const again = await judgeImages([...urls], 't', options({ maxPerRecord: 2 }));
    expect(first).toHaveLength(2);
    expect(again.map((verdict) => verdict.position)).toEqual(first.map((verdict) => verdict.position));
  });
});

describe('images sent to the AI providers', () => {
  interface Captured {
    url: string;
    body: { input?: unknown; messages?: { role: string; content: unknown }[] };
  }
  const captured: Captured[] = [];
  let api: http.Server;
  let apiBase: string;

  beforeAll(async () => {
    api = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Captured['body'];
        captured.push({ url: req.url ?? '', body });
        res.writeHead(200, { 'content-type': 'application/json' });
        if (req.url === '/v1/moderations') {
          // An image scores high on `sexual`; text alone does not.
          const withImage = JSON.stringify(body.input).includes('image_url');
          res.end(
            JSON.stringify({ results: [{ flagged: withImage, category_scores: { sexual: withImage ? 0.9 : 0.01 } }] }),
          );
        } else {
          const verdict = { flagged: JSON.stringify(body.messages).includes('image_url'), reasoning: 'r' };
          res.end(JSON.stringify({ choices: [{ message: { content: JSON.stringify(verdict) } }] }));
        }
      });
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    apiBase = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => api.close(() => resolve()));
  });

  function engineWithProviders() {
    // Fetching only: the providers get the images without the bundled model.
    return createEngine({
      images: { ...options(), model: undefined },
      provider: { baseUrl: apiBase, model: 'omni-moderation-latest', timeoutMs: 5000 },
      llm: {
        baseUrl: `${apiBase}/v1`,
        model: 'gpt-4o',
        timeoutMs: 5000,
        maxAttempts: 1,
        retryInitialMs: 10,
        tenantConcurrency: 4,
      },
    });
  }

  const dataUrl = expect.stringMatching(/^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);

  it('sends omni-moderation the text with the first image, and each other image alone, as image inputs', async () => {
    captured.length = 0;
    const result = await engineWithProviders().moderate(
      record([`${base}/solid.png`, `${base}/page.html`, `${base}/solid.png?second`]),
      rules({ type: 'openai-moderation', thresholds: { sexual: 0.5 } }),
    );
    expect(result.reasons).toEqual(['Content contains sexual content']);
    const inputs = captured.filter((request) => request.url === '/v1/moderations').map((request) => request.body.input);
    // The page is not an image: only the two images travel, as data URLs (never their addresses).
    expect(inputs).toHaveLength(2);
    expect(inputs).toEqual(
      expect.arrayContaining([
        [
          { type: 'text', text: 'hello' },
          { type: 'image_url', image_url: { url: dataUrl } },
        ],
        [{ type: 'image_url', image_url: { url: dataUrl } }],
      ]),
    );
    expect(JSON.stringify(inputs)).not.toContain(base);
  });

  it('sends a prompt strategy’s vision model the images as content parts, unless skipImages is set', async () => {
    captured.length = 0;
    const engine = engineWithProviders();
    const prompt = (skipImages: boolean): Strategy => ({
      type: 'prompt',
      topic: 'nudity',
      prompt: 'Flag nudity.',
      skipImages,
    });
    const seen = await engine.moderate(record([`${base}/solid.png`]), rules(prompt(false)));
    expect(seen.reasons).toEqual(['Content flagged for nudity']);
    const [withImages] = captured.filter((request) => request.url === '/v1/chat/completions');
    expect(withImages?.body.messages?.[1]?.content).toEqual([
      { type: 'text', text: 'hello' },
      { type: 'image_url', image_url: { url: dataUrl } },
    ]);

    captured.length = 0;
    const skipped = await engine.moderate(record([`${base}/solid.png`]), rules(prompt(true)));
    expect(skipped.status).toBe('Compliant');
    const [textOnly] = captured.filter((request) => request.url === '/v1/chat/completions');
    expect(textOnly?.body.messages?.[1]?.content).toBe('hello');
  });
});
