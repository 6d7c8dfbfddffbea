import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { COLLECTIONS } from '@vigil/proto';
import type { ModerateResponse__Output } from '@vigil/proto/dist/generated/vigil/moderation/v1/ModerateResponse';
import { waitFor } from '../../../deploy/test-support';
import { ActivityGate, OcrPool } from '../../src/engine';
import type { ReadResult } from '../../src/engine/images/read-text';
import type { PauseEnd } from '../../src/engine/images/text-first';
import type { OffLoopOutcome } from '../../src/engine/off-loop';
import { startHarness, type Harness } from './harness';
import { textImage } from './image-support';

// Text first (IMAGE_OCR_TEXT_FIRST): the OCR processes, with the real tesseract.js and its English model (the built
// dist/engine/images/ocr-process.js, `npm run build` first), stopped while text-only moderations are in flight.

const casinoImage = () =>
  textImage('casino bonus tonight', {
    width: 700,
    height: 200,
    left: 30,
    top: 60,
    ink: '#101010',
    background: '#ffffff',
  });

/** A process's state letter (`T`: stopped) and the CPU time it and its threads used, clock ticks (Linux /proc). */
function statOf(pid: number): { state: string; ticks: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0] ?? '', ticks: Number(fields[11]) + Number(fields[12]) };
}

function textOf(outcome: OffLoopOutcome<ReadResult>): string {
  if (!outcome.ok || 'failure' in outcome.value) throw new Error(`not read: ${JSON.stringify(outcome)}`);
  return outcome.value.text;
}

const pools: OcrPool[] = [];
let casino: Uint8Array;

beforeAll(async () => {
  casino = new Uint8Array(await casinoImage());
});

afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.close()));
});

function pool(overrides: Partial<ConstructorParameters<typeof OcrPool>[0]> = {}): OcrPool {
  const created = new OcrPool({ processes: 1, maxQueuedPerTenant: 10, priority: 'normal', ...overrides });
  pools.push(created);
  return created;
}

describe('OCR processes with text first', () => {
  it('stop a reading while text is in flight, and continue it once text left: the reading finishes', async () => {
    const gate = new ActivityGate();
    const ends: PauseEnd[] = [];
    const ocr = pool({
      textFirst: { gate, lingerMs: 5, maxPausedMs: 50_000, windowMs: 60_000, onPause: (_ms, end) => ends.push(end) },
    });
    await ocr.ready();
    const [pid] = ocr.pids;
    if (pid === undefined) throw new Error('no OCR process');
    let settled = false;
    const reading = ocr.read('a', { bytes: casino, maxPixels: 4e7 }, { budgetMs: 60_000 });
    void reading.then(
      () => (settled = true),
      () => (settled = true),
    );
    const leave = gate.enter();
    expect(ocr.paused).toBe(true);
    await waitFor(() => statOf(pid).state === 'T', { what: 'the OCR process to stop', timeoutMs: 10_000 });
    const stoppedAt = Date.now();
    const ticks = statOf(pid).ticks;
    await waitFor(() => Date.now() - stoppedAt > 1000, { what: 'a second stopped', timeoutMs: 10_000 });
    // Stopped: no CPU time spent, and the reading not done.
    expect(statOf(pid)).toEqual({ state: 'T', ticks });
    expect(settled).toBe(false);
    leave();
    expect(textOf(await reading)).toMatch(/casino bonus tonight/i);
    expect(statOf(pid).state).not.toBe('T');
    expect(ends).toEqual(['text_idle']);
    expect(ocr.pids).toEqual([pid]);
  }, 120_000);

  it('do not end a reading paused past 4 budgets of wall time as starved: the share cap lets it finish', async () => {
    const gate = new ActivityGate();
    const ends: PauseEnd[] = [];
    const exits: (string | number | null)[] = [];
    const ocr = pool({
      onExit: ({ code, signal }) => exits.push(signal ?? code),
      textFirst: { gate, lingerMs: 5, maxPausedMs: 9_500, windowMs: 10_000, onPause: (_ms, end) => ends.push(end) },
    });
    await ocr.ready();
    const pids = ocr.pids;
    // Text in flight throughout: the reading is stopped 9.5 s of every 10 s.
    const leave = gate.enter();
    const budgetMs = 2000;
    const started = Date.now();
    const outcome = await ocr.read('a', { bytes: casino, maxPixels: 4e7 }, { budgetMs });
    const elapsed = Date.now() - started;
    leave();
    expect(textOf(outcome)).toMatch(/casino bonus tonight/i);
    expect(elapsed).toBeGreaterThan(4 * budgetMs);
    expect(ends[0]).toBe('share_cap');
    expect(exits).toEqual([]);
    expect(ocr.pids).toEqual(pids);
  }, 120_000);

  it('end a reading over its budget of CPU time though text is in flight throughout, and read the next', async () => {
    const gate = new ActivityGate();
    const exits: (string | number | null)[] = [];
    const ocr = pool({
      onExit: ({ code, signal }) => exits.push(signal ?? code),
      textFirst: { gate, lingerMs: 5, maxPausedMs: 300, windowMs: 600 },
    });
    await ocr.ready();
    const leave = gate.enter();
    const over = await ocr.read('a', { bytes: casino, maxPixels: 4e7 }, { budgetMs: 50 });
    expect(over).toEqual({ ok: false, reason: 'budget' });
    // SIGKILL ends a stopped process too.
    await waitFor(() => exits.length > 0, { what: 'the OCR process to end', timeoutMs: 10_000 });
    expect(exits).toEqual(['SIGKILL']);
    // The process started again reads, stopped and continued like the first.
    const next = await ocr.read('a', { bytes: casino, maxPixels: 4e7 }, { budgetMs: 60_000 });
    leave();
    expect(textOf(next)).toMatch(/casino bonus tonight/i);
    expect(ocr.paused).toBe(false);
  }, 120_000);
});

describe('the moderator with text first', () => {
  let h: Harness;
  let images: http.Server;
  let imageUrl: string;

  beforeAll(async () => {
    const png = await casinoImage();
    images = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(png));
    await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
    imageUrl = `http://127.0.0.1:${(images.address() as AddressInfo).port}/casino.png`;
    h = await startHarness({
      IMAGE_OCR: true,
      IMAGE_OCR_TEXT_FIRST: true,
      IMAGE_OCR_BUDGET_MS: 30_000,
      IMAGE_ALLOWED_CIDRS: ['127.0.0.0/8'],
    });
  }, 120_000);

  afterAll(async () => {
    await h.close();
    await new Promise((resolve) => images.close(resolve));
  });

  /** Pauses of the OCR process so far (all ends). */
  const pauses = async () =>
    [
      ...(await h.registry.getSingleMetricAsString('moderator_image_ocr_pause_duration_seconds')).matchAll(
        /_count\{end="\w+"\} (\d+)/g,
      ),
    ].reduce((sum, match) => sum + Number(match[1]), 0);

  it('judges an image record beside a steady stream of text-only calls, which pause OCR, and reads the next one once they stop', async () => {
    await waitFor(() => h.moderator.ready(), { what: 'the OCR model to load', timeoutMs: 120_000 });
    const tenantId = await h.newTenant();
    await h.db.collection<{ _id: string; rules: unknown[] }>(COLLECTIONS.rules).insertOne({
      _id: tenantId,
      rules: [
        {
          id: 'text-in-images',
          name: 'Text in images',
          enabled: true,
          entities: [],
          strategies: [{ type: 'image-text', onTimeout: 'flag' }],
        },
        {
          id: 'gambling',
          name: 'Gambling',
          enabled: true,
          entities: [],
          strategies: [{ type: 'blocklist', words: ['casino'], wholeWord: true }],
        },
      ],
    });
    const moderate = (clientId: string, content: Record<string, unknown>) =>
      h.call<Record<string, unknown>, ModerateResponse__Output>('Moderate', {
        tenantId,
        clientId,
        name: clientId,
        entity: 'post',
        content,
      });
    const image = { text: 'look', imageUrls: [imageUrl] };

    // Alone, an image record's own reading is never paused: it does not count as text in flight.
    const alone = await moderate('image-1', image);
    expect(alone.reasons).toEqual(["Image 1's text contains blocked word: casino"]);
    expect(await pauses()).toBe(0);

    // Four callers of text-only records, each sending the next as the last is answered.
    let texts = 0;
    let stop = false;
    const callers = Array.from({ length: 4 }, async (_, caller) => {
      while (!stop) {
        const res = await moderate(`text-${caller}-${texts}`, { text: 'a quiet afternoon by the river' });
        expect(res.status).toBe('Compliant');
        texts += 1;
      }
    });
    try {
      await waitFor(() => texts >= 20, { what: 'text-only calls under way', timeoutMs: 30_000 });
      // The Moderate call's deadline (15 s) bounds the reading. Outside the pauses OCR still runs under SCHED_IDLE, so
      // on a machine the callers (and anything else) keep busy it may get no CPU by then: the record then says so.
      const beside = await moderate('image-2', image);
      expect([
        ["Image 1's text contains blocked word: casino"],
        ["Image 1's text could not be read in time (timeout): flagged for review"],
      ]).toContainEqual(beside.reasons);
      expect(beside.status).toBe('Flagged');
      expect(await pauses()).toBeGreaterThan(0);
    } finally {
      stop = true;
      await Promise.all(callers);
    }
    // The pauses left the OCR process whole and running: once text stops, the next image record is read.
    const after = await moderate('image-3', image);
    expect(after.reasons).toEqual(["Image 1's text contains blocked word: casino"]);
    const metrics = await h.registry.getSingleMetricAsString('moderator_image_texts_total');
    const read = /moderator_image_texts_total\{outcome="read"\} (\d+)/.exec(metrics);
    expect(Number(read?.[1])).toBeGreaterThanOrEqual(2);
  }, 180_000);
});
