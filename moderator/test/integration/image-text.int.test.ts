import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Rule, type RuleSet, type Strategy } from '@vigil/proto/rules';
import sharp from 'sharp';
import { imageOptions, textImage } from './image-support';
import { createEngine, ImageFetcher, OcrPool, OffLoopPool, workerFile, type ImageOptions } from '../../src/engine';
import type { EngineInput } from '../../src/engine';
import type { TextOutcome } from '../../src/engine/images/judge-images';

// Text in images read by the real tesseract.js (English model of @tesseract.js-data/eng) in the built OCR process
// (dist/engine/images/ocr-process.js, `npm run build` first), from images made here and served by a local HTTP server;
// the text goes through the rule set's local strategies, each image's text a field of its own.

/** A PNG of dark text on a light background, in a font from npm (Roboto Bold). */
const linesImage = (lines: string[], background = '#f4f1e8'): Promise<Buffer> =>
  textImage(lines.join('\n'), {
    width: 800,
    height: 400,
    left: 40,
    top: 80,
    ink: '#202020',
    background,
    font: 'Roboto Bold',
  });

let server: http.Server;
let base: string;
const pools: (OffLoopPool | OcrPool)[] = [];
const fetchers: ImageFetcher[] = [];
let imagePool: OffLoopPool;
let ocrPool: OcrPool;

beforeAll(async () => {
  const images: Record<string, Buffer> = {
    '/casino.png': await linesImage(['casino bonus tonight', 'no deposit needed']),
    '/contact.png': await linesImage(['add me on telegram', 'visit www.winprize.example.net']),
    '/caption.png': await linesImage(['our garden this spring']),
    '/blank.png': await sharp({ create: { width: 320, height: 200, channels: 3, background: '#4477aa' } })
      .png()
      .toBuffer(),
  };
  server = http.createServer((req, res) => {
    const body = images[new URL(req.url ?? '/', 'http://localhost').pathname];
    if (!body) return res.writeHead(404).end();
    return res.writeHead(200, { 'content-type': 'image/png' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  imagePool = new OffLoopPool({
    filename: workerFile('image-worker'),
    threads: 1,
    tenantThreads: 1,
    maxQueuedPerTenant: 100,
    workerData: { model: 'MobileNetV2Mid' },
  });
  ocrPool = new OcrPool({ processes: 1, maxQueuedPerTenant: 100, priority: 'idle' });
  pools.push(imagePool, ocrPool);
  const ready = await imagePool.run('ready', 'ready', {}, { budgetMs: 5 * 60_000 });
  expect(ready.ok).toBe(true);
  await ocrPool.ready();
}, 5 * 60_000);

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await Promise.all([...pools.map((pool) => pool.close()), ...fetchers.map((fetcher) => fetcher.close())]);
});

const options = (overrides: Partial<ImageOptions> = {}): ImageOptions =>
  imageOptions(fetchers, imagePool, { ocr: { pool: ocrPool, budgetMs: 60_000, maxPixels: 40_000_000 }, ...overrides });

function record(imageUrls: string[], text = 'look at this'): EngineInput {
  return { entity: 'post', name: '', text, imageUrls, externalUrls: [], tenantId: 'tenant-a' };
}

function rule(id: string, ...strategies: Strategy[]): Rule {
  return { id, name: id, enabled: true, entities: [], strategies };
}

const READ: Strategy = { type: 'image-text', onTimeout: 'ignore' };
const CASINO: Strategy = { type: 'blocklist', words: ['casino'], wholeWord: true, profanity: false };

describe('text in images', () => {
  it('flags a blocklisted word written in the second image, naming that image’s text, and keeps what it read', async () => {
    const outcomes: TextOutcome[] = [];
    const engine = createEngine({ images: options({ onText: (outcome) => outcomes.push(outcome) }) });
    const rules: RuleSet = { rules: [rule('text-in-images', READ), rule('gambling', CASINO)] };
    const result = await engine.moderate(record([`${base}/caption.png`, `${base}/casino.png`]), rules);
    expect(result.status).toBe('Flagged');
    expect(result.reasons).toEqual(["Image 2's text contains blocked word: casino"]);
    expect(result.rules).toEqual(['gambling']);
    expect(result.images?.map((image) => image.position)).toEqual([1, 2]);
    expect(result.images?.[0]?.text).toMatch(/garden this spring/i);
    expect(result.images?.[1]?.text).toMatch(/casino bonus tonight/i);
    expect(JSON.stringify(result)).not.toContain(base);
    expect(outcomes.sort()).toEqual(['read', 'read']);
  }, 120_000);

  it('reads nothing without an image-text strategy, and judges only the record then', async () => {
    const outcomes: TextOutcome[] = [];
    const engine = createEngine({ images: options({ onText: (outcome) => outcomes.push(outcome) }) });
    const result = await engine.moderate(record([`${base}/casino.png`]), { rules: [rule('gambling', CASINO)] });
    expect(result).toMatchObject({ status: 'Compliant', reasons: [], rules: [] });
    expect(result.images).toBeUndefined();
    expect(outcomes).toEqual([]);
  });

  it('runs links, patterns and contact details over the text too, and an image without text reads empty', async () => {
    const engine = createEngine({ images: options() });
    const rules: RuleSet = {
      rules: [
        rule('text-in-images', READ),
        rule('links', { type: 'links', blockedDomains: ['example.net'], allowedDomains: [] }),
        rule('apps', { type: 'patterns', patterns: ['\\btele(gram|\\s*gram)\\b'] }),
        rule('contact', { type: 'pii', categories: ['asking', 'handle'], mask: false, regions: [] }),
      ],
    };
    const result = await engine.moderate(record([`${base}/blank.png`, `${base}/contact.png`]), rules);
    expect(result.status).toBe('Flagged');
    expect(result.reasons).toEqual(
      expect.arrayContaining([
        "Image 2's text links to blocked domain: example.net",
        "Image 2's text matches pattern: \\btele(gram|\\s*gram)\\b",
        expect.stringMatching(/^Image 2's text asks for contact details \(asking\): \d+-\d+$/),
      ]),
    );
    expect(result.rules).toEqual(['links', 'apps', 'contact']);
    expect(result.images?.find((image) => image.position === 1)).toEqual({ position: 1 });
  }, 120_000);

  it('judges a record whose OCR ran out of its budget on what finished, and says so', async () => {
    // A pool whose every read ends over its budget: the process reading it is stopped (and starts again).
    const engine = createEngine({
      images: options({ ocr: { pool: ocrPool, budgetMs: 1, maxPixels: 40_000_000 } }),
    });
    const rules: RuleSet = { rules: [rule('text-in-images', READ), rule('gambling', CASINO)] };
    const result = await engine.moderate(record([`${base}/casino.png`], 'casino night'), rules);
    expect(result.status).toBe('Flagged');
    expect(result.reasons).toEqual(['Content contains blocked word: casino']);
    expect(result.images).toEqual([{ position: 1, textFailure: 'budget' }]);

    const flagging: RuleSet = {
      rules: [rule('text-in-images', { type: 'image-text', onTimeout: 'flag' }), rule('gambling', CASINO)],
    };
    const flagged = await engine.moderate(record([`${base}/casino.png`]), flagging);
    expect(flagged.status).toBe('Flagged');
    expect(flagged.reasons).toEqual(["Image 1's text could not be read in time (budget): flagged for review"]);
    expect(flagged.rules).toEqual(['text-in-images']);
  }, 120_000);

  it('reads the text for a caller who waits, within its deadline', async () => {
    const engine = createEngine({ images: options() });
    const rules: RuleSet = { rules: [rule('text-in-images', READ), rule('gambling', CASINO)] };
    const result = await engine.moderate({ ...record([`${base}/casino.png`]), deadline: Date.now() + 30_000 }, rules);
    expect(result.reasons).toEqual(["Image 1's text contains blocked word: casino"]);
  }, 60_000);
});
