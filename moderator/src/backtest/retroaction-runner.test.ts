import pino from 'pino';
import { type RetroactionCounts, type RetroactionJobDoc, type RetroactionRunDoc } from '@vigil/proto';
import { zeroRetroactionCounts } from './retroaction-docs';
import { UnavailableError } from '../domain/errors';
import type { RerunOutcome } from '../service/rerun';
import { BatchJobInterrupted } from './batch-job';
import { RetroactionRunner } from './retroaction-runner';
import { firstRetroactionRun, type RetroactionStore } from './retroaction-store';

const job: RetroactionJobDoc = {
  _id: 'ra_1',
  tenantId: 'ten_1',
  backtestId: 'bt_1',
  version: 3,
  selection: { limit: 100, createdBefore: new Date().toISOString() },
  ai: false,
  predicted: {} as RetroactionJobDoc['predicted'],
  author: 'api_key:k',
  createdAt: new Date(),
};

/** An in-memory RetroactionStore holding one run; `ids` is what the backtest's selection reads. */
function fakeStore(ids: string[], run?: Partial<RetroactionRunDoc>) {
  let state: RetroactionRunDoc | undefined = run && { ...fakeRun(), ...run };
  let items: string[] = run ? ids : [];
  let cancelAfter = Infinity;
  let checks = 0;
  const ends: string[] = [];
  const store = {
    job: () => Promise.resolve(job),
    begin: () => {
      state = state
        ? { ...state, attempts: state.attempts + 1 }
        : { ...fakeRun(), counts: zeroRetroactionCounts(), processed: 0 };
      return Promise.resolve({ run: true, attempt: state.attempts, state });
    },
    cancelRequested: () => Promise.resolve(checks++ >= cancelAfter),
    saveSelection: (_: string, selected: string[]) => Promise.resolve(void (items = [...selected])),
    selectionChunk: (_: string, n: number) => Promise.resolve(items.slice(n * 1000, (n + 1) * 1000)),
    progress: (_: string, p: { selected?: number; processed: number; counts: RetroactionCounts }) =>
      Promise.resolve(void (state = { ...state!, ...p })),
    finish: (_: string, status: string, outcome: { error?: string } = {}) =>
      Promise.resolve(void ends.push(outcome.error ? `${status}:${outcome.error}` : status)),
  };
  return {
    store: store as unknown as RetroactionStore,
    ends,
    state: () => state!,
    cancelAfterChecks: (n: number) => (cancelAfter = n),
  };
}
const fakeRun = (): RetroactionRunDoc => firstRetroactionRun(job, new Date());

const runner = (store: RetroactionStore, retroact: (recordId: string) => RerunOutcome, seen: string[] = []) =>
  new RetroactionRunner({
    store,
    selection: { select: () => Promise.resolve({ ids: ['r1', 'r2', 'r3', 'r4', 'r5'], truncated: false }) },
    retroact: (input, options) => {
      expect(options).toEqual({ version: 3, withoutAi: true, engineTenantId: 'retroaction:ten_1' });
      expect(input.commandId).toBe(`ra_1:${input.recordId}`);
      seen.push(input.recordId);
      return Promise.resolve(retroact(input.recordId));
    },
    log: pino({ level: 'silent' }),
    ratePerSecond: 100_000,
    concurrency: 2,
    batchSize: 2,
  });

describe('RetroactionRunner', () => {
  it('stores the selection, applies every record once and counts each outcome', async () => {
    const fake = fakeStore([]);
    const outcomes: Record<string, RerunOutcome> = {
      r1: 'toFlagged',
      r2: 'toCompliant',
      r3: 'unchanged',
      r4: 'manual',
      r5: 'gone',
    };
    const seen: string[] = [];
    await runner(fake.store, (id) => outcomes[id]!, seen).run('ra_1', () => false);
    expect(seen).toEqual(['r1', 'r2', 'r3', 'r4', 'r5']);
    expect(fake.ends).toEqual(['succeeded']);
    expect(fake.state()).toMatchObject({
      selected: 5,
      processed: 5,
      counts: { toFlagged: 1, toCompliant: 1, unchanged: 1, heldByHumans: 1, skipped: 1 },
    });
  });

  it('resumes after its last stored batch, keeping the counts stored with it', async () => {
    const counts = { ...zeroRetroactionCounts(), toFlagged: 2 };
    const fake = fakeStore(['r1', 'r2', 'r3', 'r4', 'r5'], { selected: 5, processed: 2, counts });
    const seen: string[] = [];
    await runner(fake.store, () => 'toFlagged', seen).run('ra_1', () => false);
    expect(seen).toEqual(['r3', 'r4', 'r5']);
    expect(fake.state()).toMatchObject({ attempts: 2, processed: 5, counts: { toFlagged: 5 } });
  });

  it('fails as version_replaced when another version went live meanwhile', async () => {
    const fake = fakeStore([]);
    await runner(fake.store, (id) => (id === 'r3' ? 'version_replaced' : 'toFlagged')).run('ra_1', () => false);
    expect(fake.ends).toEqual(['failed:version_replaced']);
    expect(fake.state().counts.toFlagged).toBe(3);
  });

  it('stops after the batch a cancel follows, and lets go when its runner must stop', async () => {
    const cancelled = fakeStore([]);
    cancelled.cancelAfterChecks(2); // the check before starting and after the first batch say no
    const seen: string[] = [];
    await runner(cancelled.store, () => 'toFlagged', seen).run('ra_1', () => false);
    expect(seen).toHaveLength(4);
    expect(cancelled.ends).toEqual(['cancelled']);

    const stopped = fakeStore([]);
    await expect(runner(stopped.store, () => 'toFlagged').run('ra_1', () => true)).rejects.toBeInstanceOf(
      BatchJobInterrupted,
    );
    expect(stopped.ends).toEqual([]);
  });

  it('lets go when a record finds the store out of reach, and the next runner resumes after the last stored batch', async () => {
    const fake = fakeStore([]);
    const down = runner(fake.store, (id) => {
      if (id === 'r3') throw new UnavailableError('database unavailable');
      return 'toFlagged';
    });
    await expect(down.run('ra_1', () => false)).rejects.toBeInstanceOf(UnavailableError);
    expect(fake.ends).toEqual([]);
    expect(fake.state()).toMatchObject({ processed: 2, counts: { toFlagged: 2 } });

    const seen: string[] = [];
    await runner(fake.store, () => 'toFlagged', seen).run('ra_1', () => false);
    expect(seen).toEqual(['r3', 'r4', 'r5']);
    expect(fake.ends).toEqual(['succeeded']);
    expect(fake.state()).toMatchObject({ attempts: 2, processed: 5, counts: { toFlagged: 5 } });
  });
});
