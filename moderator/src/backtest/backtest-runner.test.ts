import pino from 'pino';
import { DEFAULT_SETTINGS, type BacktestJobDoc } from '@vigil/proto';
import { type RuleSet } from '@vigil/proto/rules';
import { ActivityGate, type EngineInput, type ModerationEngine } from '../engine';
import type { RecordState } from '../domain/record';
import { UnavailableError } from '../domain/errors';
import { aiCallsPerRecord, BacktestRunner, withoutAi } from './backtest-runner';
import { BatchJobInterrupted } from './batch-job';
import type { BacktestStore } from './backtest-store';

const rules: RuleSet = {
  rules: [
    {
      id: 'words',
      name: 'Words',
      enabled: true,
      entities: [],
      strategies: [
        { type: 'blocklist', words: ['otter'], wholeWord: false, profanity: false },
        { type: 'prompt', topic: 'resale', prompt: 'Flag resale.', skipImages: false },
      ],
    },
  ],
};

const record = (i: number, over: Partial<RecordState> = {}): RecordState =>
  ({
    _id: `rec_${i}`,
    tenantId: 'ten_1',
    clientId: `c${i}`,
    entity: 'post',
    content: { text: i % 2 ? 'an otter' : 'a fish', imageUrls: [], externalUrls: [] },
    passthrough: false,
    deleted: false,
    manual: false,
    status: 'Compliant',
    ...over,
  }) as RecordState;

/** An in-memory BacktestStore: the job, its records, and what the runner wrote. */
function fakeStore(records: RecordState[], job: Partial<BacktestJobDoc> = {}) {
  const written: Array<{ what: string; value: unknown }> = [];
  let cancelAfter = Infinity;
  let cancelChecks = 0;
  const doc: BacktestJobDoc = {
    _id: 'bt_1',
    tenantId: 'ten_1',
    version: 2,
    rules: rules.rules,
    selection: { limit: 100, createdBefore: new Date().toISOString() },
    ai: { enabled: false, maxCalls: 100 },
    author: 'api_key:k',
    createdAt: new Date(),
    expiresAt: new Date(Date.now() + 60_000),
    ...job,
  };
  const store = {
    job: () => Promise.resolve(doc),
    begin: () => Promise.resolve({ run: true, attempt: 1 }),
    cancelRequested: () => Promise.resolve(cancelChecks++ >= cancelAfter),
    select: async (_: BacktestJobDoc, pace: () => Promise<void>) => {
      const started = Date.now();
      await pace(); // as after a batch of ids read
      written.push({ what: 'selection paced', value: Date.now() - started });
      return { ids: records.map((r) => r._id), truncated: false };
    },
    record: (_: string, id: string) => Promise.resolve(records.find((r) => r._id === id) ?? null),
    progress: (_: string, counts: unknown) => Promise.resolve(void written.push({ what: 'progress', value: counts })),
    finish: (_: string, status: string, outcome: unknown) =>
      Promise.resolve(void written.push({ what: status, value: outcome })),
    usersNow: () => Promise.resolve([]),
  };
  return {
    store: store as unknown as BacktestStore,
    written,
    cancelAfterChecks: (n: number) => (cancelAfter = n),
  };
}

/** Flags "otter" (the blocklist), and every record for a prompt strategy, as the LLM would say; counts prompt uses. */
function fakeEngine() {
  const seen: Array<{ input: EngineInput; prompts: number }> = [];
  const engine: ModerationEngine = {
    moderate(input, ruleSet) {
      const prompts = ruleSet.rules.flatMap((r) => r.strategies).filter((s) => s.type === 'prompt').length;
      seen.push({ input, prompts });
      const flagged = input.text.includes('otter') || prompts > 0;
      return Promise.resolve({
        status: flagged ? 'Flagged' : 'Compliant',
        reasons: flagged ? ['matched'] : [],
        rules: flagged ? ['words'] : [],
      });
    },
  };
  return { engine, seen };
}

const runner = (store: BacktestStore, engine: ModerationEngine, batchSize = 2, live?: ActivityGate) =>
  new BacktestRunner({
    ...(live ? { live: { gate: live, quietMs: 60_000, ratePerSecond: 10 } } : {}),
    store,
    engine,
    tenants: { get: () => Promise.resolve({ settings: DEFAULT_SETTINGS, rules, rulesVersion: 0 }) },
    log: pino({ level: 'silent' }),
    ratePerSecond: 100_000,
    concurrency: 2,
    batchSize,
    ai: { provider: false, llm: true },
  });

describe('BacktestRunner', () => {
  it('judges every selected record without AI strategies unless asked, skips passthrough, and succeeds', async () => {
    const { store, written } = fakeStore([record(1), record(2), record(3, { passthrough: true, content: undefined })]);
    const { engine, seen } = fakeEngine();
    await runner(store, engine).run('bt_1', () => false);
    expect(seen.map((s) => s.prompts)).toEqual([0, 0]);
    // A tenant of its own in the engine: live work keeps its share of the threads.
    expect(seen[0]!.input.tenantId).toBe('backtest:ten_1');
    const finish = written.at(-1)!;
    expect(finish.what).toBe('succeeded');
    expect(finish.value).toMatchObject({
      processed: 3,
      result: { judged: 2, skipped: { passthrough: 1 }, changes: { toFlagged: 1 } },
    });
  });

  it('spends at most the job’s AI calls, then judges without AI strategies', async () => {
    const { store, written } = fakeStore(
      [1, 2, 3, 4, 5].map((i) => record(i)),
      {
        ai: { enabled: true, maxCalls: 3 },
      },
    );
    const { engine, seen } = fakeEngine();
    await runner(store, engine).run('bt_1', () => false);
    expect(seen.filter((s) => s.prompts > 0)).toHaveLength(3);
    expect(written.at(-1)!.value).toMatchObject({
      result: { ai: { enabled: true, calls: 3, recordsWithoutAi: 2 } },
    });
  });

  it('stops at the batch after a cancel, as cancelled and without a result', async () => {
    const { store, written, cancelAfterChecks } = fakeStore([1, 2, 3, 4, 5, 6].map((i) => record(i)));
    cancelAfterChecks(2); // the check before starting and after the first batch say no
    const { engine, seen } = fakeEngine();
    await runner(store, engine).run('bt_1', () => false);
    expect(seen).toHaveLength(4);
    expect(written.at(-1)).toEqual({ what: 'cancelled', value: { processed: 4 } });
  });

  it('judges at its background rate while live moderations run, however high its full rate', async () => {
    const { store, written } = fakeStore([1, 2, 3, 4, 5].map((i) => record(i)));
    const { engine } = fakeEngine();
    const live = new ActivityGate();
    live.enter()(); // a live moderation just ended: within the quiet time
    const started = Date.now();
    // Two records at a time at 10 a second: the second and third slices each wait 200 ms for their turn.
    await runner(store, engine, 100, live).run('bt_1', () => false);
    const paced = written.find((w) => w.what === 'selection paced')!.value as number;
    expect(Date.now() - started - paced).toBeGreaterThanOrEqual(390);
    expect(written.at(-1)!.what).toBe('succeeded');
  });

  it('reads its selection a batch a second while live moderations run, and at once without them', async () => {
    const live = new ActivityGate();
    const leave = live.enter();
    const busy = fakeStore([record(1)]);
    await runner(busy.store, fakeEngine().engine, 100, live).run('bt_1', () => false);
    expect(busy.written.find((w) => w.what === 'selection paced')!.value).toBeGreaterThanOrEqual(990);
    leave();
    const idle = fakeStore([record(1)]);
    await runner(idle.store, fakeEngine().engine, 100).run('bt_1', () => false);
    expect(idle.written.find((w) => w.what === 'selection paced')!.value).toBeLessThan(990);
  });

  it('lets go of the job when its runner must stop, writing no end', async () => {
    const { store, written } = fakeStore([1, 2, 3, 4].map((i) => record(i)));
    const { engine } = fakeEngine();
    let stop = false;
    const run = runner(store, engine, 1).run('bt_1', () => stop);
    stop = true;
    await expect(run).rejects.toBeInstanceOf(BatchJobInterrupted);
    expect(written.map((w) => w.what)).not.toContain('succeeded');
  });

  it('lets go of the job, writing no end, when a record read finds the store out of reach', async () => {
    const { store, written } = fakeStore([1, 2, 3, 4].map((i) => record(i)));
    (store as unknown as { record: () => Promise<never> }).record = () =>
      Promise.reject(new UnavailableError('database unavailable'));
    const { engine } = fakeEngine();
    await expect(runner(store, engine).run('bt_1', () => false)).rejects.toBeInstanceOf(UnavailableError);
    expect(written.map((w) => w.what)).toEqual(['selection paced', 'progress']);
  });
});

describe('AI strategies of a rule set', () => {
  it('are left out by withoutAi, and counted per record by aiCallsPerRecord', () => {
    expect(withoutAi(rules).rules[0]!.strategies.map((s) => s.type)).toEqual(['blocklist']);
    expect(aiCallsPerRecord(rules, { provider: true, llm: true }, 'post')).toBe(1);
    expect(aiCallsPerRecord(rules, { provider: true, llm: false }, 'post')).toBe(0);
  });
});
