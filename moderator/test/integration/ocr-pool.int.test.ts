import { readdirSync, readFileSync } from 'node:fs';
import { waitFor } from '../../../deploy/test-support';
import { TenantBusyError } from '../../src/domain/errors';
import { OcrPool } from '../../src/engine';
import type { ReadResult } from '../../src/engine/images/read-text';
import type { OffLoopOutcome } from '../../src/engine/off-loop';
import { textImage } from './image-support';

// The OCR processes with the real tesseract.js and its English model (the built dist/engine/images/ocr-process.js,
// `npm run build` first): where they run, their queue and their budget.

/** A PNG of dark text on white, in a font from npm (Roboto). */
const wordsImage = async (words: string): Promise<Uint8Array> =>
  new Uint8Array(
    await textImage(words, { width: 700, height: 200, left: 30, top: 60, ink: '#101010', background: '#ffffff' }),
  );

/** Each thread of a process: its scheduling policy (5 is SCHED_IDLE) and nice value, from /proc. */
function threadsOf(pid: number): { policy: number; nice: number }[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { nice: Number(fields[16]), policy: Number(fields[38]) };
  });
}

function textOf(outcome: OffLoopOutcome<ReadResult>): string {
  if (!outcome.ok || 'failure' in outcome.value) throw new Error(`not read: ${JSON.stringify(outcome)}`);
  return outcome.value.text;
}

const pools: OcrPool[] = [];
let casino: Uint8Array;
let garden: Uint8Array;

beforeAll(async () => {
  casino = await wordsImage('casino bonus tonight');
  garden = await wordsImage('our garden this spring');
});

afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.close()));
});

function pool(overrides: Partial<ConstructorParameters<typeof OcrPool>[0]> = {}): OcrPool {
  const created = new OcrPool({ processes: 1, maxQueuedPerTenant: 10, priority: 'idle', ...overrides });
  pools.push(created);
  return created;
}

const BUDGET_MS = 60_000;

describe('OCR processes', () => {
  it('read an image’s text with every thread of the process under SCHED_IDLE', async () => {
    const ocr = pool();
    await ocr.ready();
    const outcome = await ocr.read('a', { bytes: casino, maxPixels: 4e7 }, { budgetMs: BUDGET_MS });
    expect(textOf(outcome)).toMatch(/casino bonus tonight/i);
    expect(ocr.scheduling).toEqual(['idle']);
    const [pid] = ocr.pids;
    if (pid === undefined) throw new Error('no OCR process');
    const threads = threadsOf(pid);
    // The main thread, V8's platform threads, libuv's and libvips' threads and tesseract's worker thread.
    expect(threads.length).toBeGreaterThan(4);
    expect(threads.filter((thread) => thread.policy !== 5)).toEqual([]);
  }, 120_000);

  it('at nice 19 when SCHED_IDLE is not asked for, every thread', async () => {
    const ocr = pool({ priority: 'nice' });
    await ocr.ready();
    textOf(await ocr.read('a', { bytes: garden, maxPixels: 4e7 }, { budgetMs: BUDGET_MS }));
    const [pid] = ocr.pids;
    if (pid === undefined) throw new Error('no OCR process');
    expect(ocr.scheduling).toEqual(['nice']);
    expect(threadsOf(pid).filter((thread) => thread.nice !== 19)).toEqual([]);
  }, 120_000);

  it('ends a reading over its budget with its process, which starts again and reads the next', async () => {
    const exits: (string | number | null)[] = [];
    const ocr = pool({ onExit: ({ code, signal }) => exits.push(signal ?? code) });
    await ocr.ready();
    const [first] = ocr.pids;
    const over = await ocr.read('a', { bytes: casino, maxPixels: 4e7 }, { budgetMs: 1 });
    expect(over).toEqual({ ok: false, reason: 'budget' });
    const next = await ocr.read('a', { bytes: garden, maxPixels: 4e7 }, { budgetMs: BUDGET_MS });
    expect(textOf(next)).toMatch(/garden this spring/i);
    expect(exits).toEqual(['SIGKILL']);
    expect(ocr.pids).toHaveLength(1);
    expect(ocr.pids[0]).not.toBe(first);
  }, 120_000);

  it('counts the process’s CPU time against the budget, not the time it waited for a core', async () => {
    const ocr = pool({ priority: 'normal' });
    await ocr.ready();
    const [pid] = ocr.pids;
    if (pid === undefined) throw new Error('no OCR process');
    const budgetMs = 3000;
    const started = Date.now();
    const reading = ocr.read('a', { bytes: casino, maxPixels: 4e7 }, { budgetMs });
    // Stopped, as a process under SCHED_IDLE is on a busy machine, past its budget of wall time.
    process.kill(pid, 'SIGSTOP');
    await waitFor(() => Date.now() - started > budgetMs + 300, { what: 'a budget of wall time', timeoutMs: 10_000 });
    process.kill(pid, 'SIGCONT');
    expect(textOf(await reading)).toMatch(/casino bonus tonight/i);
    expect(ocr.pids).toEqual([pid]);
  }, 120_000);

  it('takes tenants in turn, bounds each one’s queue, and drops a waiting reading whose caller gave up', async () => {
    const ocr = pool({ maxQueuedPerTenant: 2 });
    await ocr.ready();
    const order: string[] = [];
    const read = (tenant: string, bytes: Uint8Array, signal?: AbortSignal) =>
      ocr.read(tenant, { bytes, maxPixels: 4e7 }, { budgetMs: BUDGET_MS, signal }).then((outcome) => {
        order.push(tenant);
        return textOf(outcome);
      });
    // The first of tenant a runs at once; two more wait, and a fourth finds the queue full.
    const a = [read('a', casino), read('a', garden), read('a', casino)];
    await expect(read('a', garden)).rejects.toBeInstanceOf(TenantBusyError);
    const b = read('b', garden);
    const giveUp = new AbortController();
    const dropped = read('c', casino, giveUp.signal);
    giveUp.abort(new Error('caller gave up'));
    await expect(dropped).rejects.toThrow('caller gave up');
    const texts = await Promise.all([...a, b]);
    expect(texts[3]).toMatch(/garden this spring/i);
    // Tenant b waited for one reading of a, not for a's queue.
    expect(order).toEqual(['a', 'b', 'a', 'a']);
  }, 120_000);
});
