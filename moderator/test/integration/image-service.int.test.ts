import { randomInt } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { COLLECTIONS } from '@vigil/proto';
import type { ModerateResponse__Output } from '@vigil/proto/dist/generated/vigil/moderation/v1/ModerateResponse';
import { startImageServer, waitFor, type ImageServer } from '../../../deploy/test-support';
import { startHarness, type Harness } from './harness';
import { textImage } from './image-support';

// The moderator as deployed with IMAGE_THREADS=1 and IMAGE_OCR=true: the bundled model and the OCR load in the built
// image worker at start (readiness waits for them), and a Moderate call's images are fetched, judged and read.
// `npm run build` first.

let h: Harness;
let images: ImageServer;
let base: string;
/** Takes image requests and never answers them. */
let hanging: http.Server;
/** Serves one image of text: a marker word of random letters, and "casino". */
let textImages: http.Server;
const marker = `zq${Array.from({ length: 8 }, () => 'abcdefghjkmnpqrstuvwxy'[randomInt(22)]).join('')}`;

beforeAll(async () => {
  images = await startImageServer({ width: 200, height: 150, background: { r: 240, g: 200, b: 40 } });
  base = images.base;
  hanging = http.createServer(() => undefined);
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
  const png = await textImage(`${marker} casino`, {
    width: 800,
    height: 300,
    left: 40,
    top: 100,
    ink: '#101010',
    background: '#ffffff',
  });
  textImages = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(png));
  await new Promise<void>((resolve) => textImages.listen(0, '127.0.0.1', resolve));
  // A reading takes about 0.3 s; the budget leaves room for a machine busy with other tests.
  h = await startHarness({
    IMAGE_THREADS: 1,
    IMAGE_OCR: true,
    IMAGE_OCR_BUDGET_MS: 30_000,
    IMAGE_ALLOWED_CIDRS: ['127.0.0.0/8'],
  });
}, 120_000);

afterAll(async () => {
  await h.close();
  await images.close();
  hanging.closeAllConnections();
  await new Promise((resolve) => hanging.close(resolve));
  await new Promise((resolve) => textImages.close(resolve));
});

/** Once the model is loaded: a new tenant whose rule set is one rule with these strategies. */
async function imagesTenant(...strategies: Record<string, unknown>[]): Promise<string> {
  await waitFor(() => h.moderator.ready(), { what: 'the image model to load', timeoutMs: 120_000 });
  const tenantId = await h.newTenant();
  await h.db.collection<{ _id: string; rules: unknown[] }>(COLLECTIONS.rules).insertOne({
    _id: tenantId,
    rules: [{ id: 'images', name: 'Images', enabled: true, entities: [], strategies }],
  });
  return tenantId;
}

/** A Moderate call for a passthrough post of one image at `url`. */
function moderateImagePost(tenantId: string, clientId: string, name: string, url: string) {
  const post = { clientId, name, entity: 'post', content: { text: 'look', imageUrls: [url] }, passthrough: true };
  return h.call<Record<string, unknown>, ModerateResponse__Output>('Moderate', { tenantId, ...post });
}

describe('the moderator with the image model', () => {
  it('becomes ready once the model is loaded, then judges a record’s image and keeps neither bytes nor URLs', async () => {
    const tenantId = await imagesTenant({ type: 'images', thresholds: { Neutral: 0 }, onFetchError: 'ignore' });
    const url = `${base}/photo.png`;
    const res = await moderateImagePost(tenantId, 'post-1', 'A photo', url);
    expect(res.status).toBe('Flagged');
    expect(res.reasons).toEqual([expect.stringMatching(/^Image 1 classified as Neutral \(\d\.\d\d\)$/)]);

    // Passthrough: the image's URL is used in memory only, never stored with the record or its events.
    const stored = JSON.stringify([
      await h.db.collection(COLLECTIONS.records).find({}).toArray(),
      await h.db.collection(COLLECTIONS.events).find({}).toArray(),
    ]);
    expect(stored).toContain('Image 1 classified as Neutral');
    expect(stored).not.toContain(base);

    // The moderation keeps the image's class scores (the console's record page shows them), by position only.
    const moderated = await h.db
      .collection<{ type: string; data: { images?: { position: number; scores?: Record<string, number> }[] } }>(
        COLLECTIONS.events,
      )
      .findOne({ type: 'RecordModerated' });
    const images = moderated?.data.images ?? [];
    expect(images.map((image) => image.position)).toEqual([1]);
    const scores = images[0]?.scores ?? {};
    expect(Object.keys(scores).sort()).toEqual(['Drawing', 'Hentai', 'Neutral', 'Porn', 'Sexy']);
    expect(Object.values(scores).reduce((sum, score) => sum + score, 0)).toBeCloseTo(1, 2);

    const metrics = await h.registry.getSingleMetricAsString('moderator_images_total');
    expect(metrics).toMatch(/moderator_images_total\{outcome="fetched"\} 1/);
    expect(metrics).toMatch(/moderator_images_total\{outcome="judged"\} 1/);
  });

  it('answers a Moderate call in time when an image never arrives: the image is a timeout, not the call', async () => {
    const tenantId = await imagesTenant({ type: 'images', thresholds: { Porn: 0.8 }, onFetchError: 'flag' });
    // The fetch alone may take IMAGE_FETCH_TIMEOUT_MS (5 s), more than this caller waits.
    const url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/never.png`;
    const res = await h.call<Record<string, unknown>, ModerateResponse__Output>(
      'Moderate',
      { tenantId, clientId: 'post-hang', name: 'A photo', entity: 'post', content: { text: 'look', imageUrls: [url] } },
      undefined,
      4000,
    );
    expect(res.status).toBe('Flagged');
    expect(res.reasons).toEqual(['Image 1 could not be judged (timeout): flagged for review']);
  });

  it('reads the text of a passthrough record’s image for its rules, and stores none of it anywhere, nor logs it', async () => {
    // "casino" is matched by a pattern that does not spell it, so that the rule set does not hold the word either.
    const tenantId = await imagesTenant(
      { type: 'image-text', onTimeout: 'ignore' },
      { type: 'patterns', patterns: ['c[a]sino'] },
    );
    const url = `http://127.0.0.1:${(textImages.address() as AddressInfo).port}/text.png`;
    const res = await moderateImagePost(tenantId, 'post-text', 'A sign', url);
    expect(res.status).toBe('Flagged');
    // Answered with the pattern, stored without it (a passthrough record's reasons keep no details).
    expect(res.reasons).toEqual(["Image 1's text matches pattern: c[a]sino"]);

    const dump: string[] = [];
    for (const { name } of await h.db.listCollections({}, { nameOnly: true }).toArray()) {
      for (const doc of await h.db.collection(name).find({}).toArray()) dump.push(JSON.stringify(doc));
    }
    const stored = dump.join('\n');
    expect(stored).toContain("Image 1's text matches pattern");
    for (const secret of [marker, 'casino', url]) expect(stored + h.logText()).not.toContain(secret);

    const metrics = await h.registry.getSingleMetricAsString('moderator_image_texts_total');
    expect(metrics).toMatch(/moderator_image_texts_total\{outcome="read"\} 1/);
  });
});
