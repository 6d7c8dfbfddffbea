import { readdirSync, readFileSync } from 'node:fs';
import type { Rule, RuleSet, Strategy } from '@vigil/proto/rules';
import { TenantBusyError } from '../../src/domain/errors';
import { ActivityGate, createEngine, OffLoopPool, workerFile } from '../../src/engine';
import type { OffLoopOptions } from '../../src/engine/off-loop';
import type { EngineInput } from '../../src/engine';
import { waitFor } from '../../../deploy/test-support';

// The engine's worker threads run the built worker module (dist/engine/engine-worker.js): `npm run build` first.

function rule(id: string, strategies: Strategy[]): Rule {
  return { id, name: id, enabled: true, entities: [], strategies };
}

const wordRules: RuleSet = {
  rules: [rule('words', [{ type: 'blocklist', words: ['forbidden'], wholeWord: false, profanity: false }])],
};

/** Patterns that cost about 8 ms each per 20,000 repeated letters: 20 of them take far longer than 1 ms. */
const heavyRules: RuleSet = {
  rules: [rule('heavy', [{ type: 'patterns', patterns: Array.from({ length: 20 }, (_, i) => `[a-z]{1,240}${i}`) }])],
};

function record(text: string, tenantId = 'tenant-a'): EngineInput {
  return { entity: 'post', name: '', text, imageUrls: [], externalUrls: [], tenantId };
}

const pools: OffLoopPool[] = [];
function pool(
  options: Partial<
    Pick<OffLoopOptions, 'threads' | 'tenantThreads' | 'maxQueuedPerTenant' | 'niceIncrement' | 'onTask' | 'yieldTo'>
  > = {},
) {
  const created = new OffLoopPool({
    filename: workerFile('engine-worker'),
    threads: 2,
    tenantThreads: 1,
    maxQueuedPerTenant: 100,
    workerData: { ruleCacheBytes: 16 * 1024 * 1024 },
    ...options,
  });
  pools.push(created);
  return created;
}

afterAll(async () => {
  await Promise.all(pools.map((created) => created.close()));
});

/** The nice value of each thread of this process (Linux: field 19 of /proc/self/task/<tid>/stat). */
function threadNiceValues(): number[] {
  return readdirSync('/proc/self/task').flatMap((tid) => {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      return [Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])];
    } catch {
      return []; // the thread ended meanwhile
    }
  });
}

describe('engine checks off the main event loop', () => {
  it('runs the checks at the lower CPU priority it is given, and nothing else of the process', async () => {
    const before = threadNiceValues().filter((nice) => nice === 7).length;
    const niced = pool({ threads: 1, niceIncrement: 7 });
    const engine = createEngine({ checks: { pool: niced, budgetMs: 30_000 } });
    await expect(engine.moderate(record('a forbidden word'), wordRules)).resolves.toMatchObject({ status: 'Flagged' });
    const after = threadNiceValues();
    expect(after.filter((nice) => nice === 7).length - before).toBe(1);
    expect(after.filter((nice) => nice === 0).length).toBeGreaterThan(0);
  });

  it('runs a record’s local strategies in a worker and reports what they find', async () => {
    const tasks: string[] = [];
    const checks = pool({ threads: 1, onTask: (name, _seconds, outcome) => tasks.push(`${name}:${outcome}`) });
    const engine = createEngine({ checks: { pool: checks, budgetMs: 30_000 } });

    await expect(engine.moderate(record('a forbidden word'), wordRules)).resolves.toEqual({
      status: 'Flagged',
      reasons: ['Content contains blocked word: forbidden'],
      rules: ['words'],
    });
    await expect(engine.moderate(record('all fine'), wordRules)).resolves.toMatchObject({ status: 'Compliant' });
    expect(tasks).toEqual(['checks:ok', 'checks:ok']);

    // A large rule set (over 64 KiB as JSON) travels only to a worker that does not know it yet: a second trip.
    tasks.length = 0;
    const words = Array.from({ length: 1000 }, (_, index) => `${'x'.repeat(80)}${index}`);
    const large: RuleSet = {
      rules: [
        rule('large', [{ type: 'blocklist', words: [...words, 'forbidden'], wholeWord: false, profanity: false }]),
      ],
    };
    await expect(engine.moderate(record('forbidden'), large)).resolves.toMatchObject({ rules: ['large'] });
    expect(tasks).toHaveLength(2);
    await expect(engine.moderate(record('fine'), large)).resolves.toMatchObject({ status: 'Compliant' });
    expect(tasks).toHaveLength(3);
  });

  it('flags a record for review when its checks exceed the time budget, and the next record is judged', async () => {
    const engine = createEngine({ checks: { pool: pool({ threads: 1 }), budgetMs: 1 } });
    const slow = await engine.moderate(record('a'.repeat(100_000)), heavyRules);
    expect(slow).toEqual({
      status: 'Flagged',
      reasons: ['Content checks exceeded their time budget (1 ms): flagged for review'],
      rules: [],
    });

    // The worker that was stopped is replaced: a record with cheap checks and a generous budget is judged as usual.
    const roomy = createEngine({ checks: { pool: pool({ threads: 1 }), budgetMs: 30_000 } });
    await expect(roomy.moderate(record('forbidden'), wordRules)).resolves.toMatchObject({ rules: ['words'] });
    await expect(engine.moderate(record(''), { rules: [] })).resolves.toMatchObject({ status: 'Compliant' });
  });

  it('keeps a thread for other tenants: a second tenant’s record is judged before the first tenant’s backlog', async () => {
    const checks = pool({ threads: 2, tenantThreads: 1 });
    const engine = createEngine({ checks: { pool: checks, budgetMs: 60_000 } });
    // Both threads started (one record per tenant takes one each), so that no worker start-up is measured below.
    await Promise.all([engine.moderate(record('x'), wordRules), engine.moderate(record('x', 'tenant-b'), wordRules)]);
    const finished: string[] = [];
    const noisy = Array.from({ length: 4 }, (_, index) =>
      engine.moderate(record('a'.repeat(20_000)), heavyRules).then(() => finished.push(`a${index}`)),
    );
    const quiet = engine.moderate(record('forbidden', 'tenant-b'), wordRules).then(() => finished.push('b'));
    await Promise.all([...noisy, quiet]);
    // Tenant a holds one thread at a time, so b's cheap record runs beside a's first one instead of after it.
    expect(finished[0]).toBe('b');
    expect(finished.filter((name) => name.startsWith('a'))).toEqual(['a0', 'a1', 'a2', 'a3']);
  });

  it('refuses a tenant’s record as busy when its queue is full, and leaves other tenants alone', async () => {
    const checks = pool({ threads: 1, maxQueuedPerTenant: 2 });
    const engine = createEngine({ checks: { pool: checks, budgetMs: 60_000 } });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 6 }, () => engine.moderate(record('a'.repeat(20_000)), heavyRules)),
    );
    const refused = outcomes.filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    expect(refused.length).toBeGreaterThan(0);
    for (const outcome of refused) expect(outcome.reason).toBeInstanceOf(TenantBusyError);
    await expect(engine.moderate(record('forbidden', 'tenant-b'), wordRules)).resolves.toMatchObject({
      rules: ['words'],
    });
  });

  it('starts a task only once the work it yields to is done, or when its wait reaches the bound', async () => {
    const gate = new ActivityGate();
    const patient = pool({ threads: 1, yieldTo: { gate, maxDelayMs: 600_000 } });
    const engine = createEngine({ checks: { pool: patient, budgetMs: 60_000 } });
    await engine.moderate(record('x'), wordRules); // the worker is up: nothing below waits for its start
    const leave = gate.enter();
    const judged = engine.moderate(record('forbidden'), wordRules);
    // The pool decides at once whether a task starts: it waits in the queue while the gate is busy.
    await waitFor(() => patient.queued === 1, { what: 'the record queued' });
    leave();
    expect(patient.queued).toBe(0);
    await expect(judged).resolves.toMatchObject({ rules: ['words'] });

    // Under a gate that stays busy, a task waits out the bound and then runs.
    const bounded = pool({ threads: 1, yieldTo: { gate, maxDelayMs: 50 } });
    const busy = gate.enter();
    const engineBounded = createEngine({ checks: { pool: bounded, budgetMs: 60_000 } });
    await expect(engineBounded.moderate(record('forbidden'), wordRules)).resolves.toMatchObject({ rules: ['words'] });
    expect(gate.busy).toBe(true);
    busy();
  });

  it('gives up a record whose caller stopped waiting while it was queued', async () => {
    const checks = pool({ threads: 1 });
    const engine = createEngine({ checks: { pool: checks, budgetMs: 60_000 } });
    const running = engine.moderate(record('a'.repeat(20_000)), heavyRules);
    const controller = new AbortController();
    const queued = engine.moderate(record('forbidden'), wordRules, controller.signal);
    controller.abort(new Error('deadline'));
    await expect(queued).rejects.toThrow('deadline');
    await expect(running).resolves.toMatchObject({ status: 'Compliant' });
    expect(checks.queued).toBe(0);
  });
});
