import pino from 'pino';
import { UnavailableError } from '../../domain/errors';
import type { BankDoc, HashDoc } from '../hash-bank-store';
import { claimInChain } from '../../store/claim-chain';
import { MemoryClaims } from '../../store/testing/memory-claims';
import { bankDoc, hashDoc } from '../testing/docs';
import { bucketId, bucketOf, RECORD_HASH_BUCKETS, type RecordHashDoc } from './record-hash-store';
import type { RetroMatchInput, RetroOutcome } from './retro-match';
import { queuedPass, type RetroPassCounts, type RetroPassDoc } from './retro-pass-store';
import { RetroRunner, type RetroRunnerOptions } from './retro-runner';

const TENANT = 'ten_1';
const PDQ = 'f'.repeat(16) + '0'.repeat(48);
/** `PDQ` with its first `bits` bits flipped: at distance `bits` from it. */
function flipped(bits: number): string {
  const words = PDQ.split('').map((digit) => parseInt(digit, 16));
  for (let bit = 0; bit < bits; bit++) words[Math.floor(bit / 4)]! ^= 8 >> (bit % 4);
  return words.map((word) => word.toString(16)).join('');
}

const bank = bankDoc;

const hash = (over: Partial<HashDoc> = {}): HashDoc => hashDoc(PDQ, { change: `${TENANT}#1`, ...over });

/**
 * The pass store in memory, with the real one's rules: one claim per attempt (a dead one taken over after the lease),
 * progress only by the latest attempt.
 */
class MemoryPasses {
  readonly passes = new Map<string, RetroPassDoc>();
  readonly claims = new MemoryClaims<{ _id: string; passId: string; at: Date }>();
  /** Writes of a claim onto its pass that fail (after the claim was stored). */
  failedRecords = 0;
  readonly progressWrites: { attempt: number; bucket: number }[] = [];

  add(over: Partial<RetroPassDoc> = {}): RetroPassDoc {
    const pass: RetroPassDoc = {
      ...queuedPass({
        _id: 'hrp_1',
        tenantId: TENANT,
        bankId: 'bnk_1',
        trigger: 'added',
        hashIds: ['hsh_1'],
        change: `${TENANT}#1`,
        createdAt: new Date(0),
      }),
      ...over,
    };
    this.passes.set(pass._id, pass);
    return pass;
  }

  pass(id = 'hrp_1'): RetroPassDoc {
    return this.passes.get(id)!;
  }

  openPasses = () => Promise.resolve([...this.passes.values()].filter((pass) => pass.open).map((p) => ({ ...p })));

  claim = async (pass: RetroPassDoc, limits: { leaseMs: number; maxAttempts: number }) => {
    const claimed = await claimInChain(this.claims, {
      key: (step) => `${pass._id}#${pass.attempt + 1 + step}`,
      fields: { passId: pass._id },
      now: new Date(),
      leaseMs: limits.leaseMs,
      steps: limits.maxAttempts - pass.attempt,
      unrecorded: () => Promise.resolve(this.pass(pass._id).open && this.pass(pass._id).attempt === pass.attempt),
    });
    if (!claimed.won) return claimed.spent ? ('spent' as const) : ('held' as const);
    if (this.failedRecords > 0) {
      this.failedRecords -= 1;
      throw new UnavailableError('database unavailable');
    }
    const attempt = pass.attempt + 1 + claimed.deadClaims;
    Object.assign(this.pass(pass._id), { state: 'running', attempt, heartbeatAt: new Date() });
    return { attempt, deadClaims: claimed.deadClaims };
  };

  progress = (passId: string, attempt: number, progress: Pick<RetroPassDoc, 'bucket' | 'counts' | 'bucketCounts'>) => {
    const pass = this.pass(passId);
    if (pass.attempt !== attempt || !pass.open) return Promise.resolve(false);
    this.progressWrites.push({ attempt, bucket: progress.bucket });
    Object.assign(pass, structuredClone(progress), { heartbeatAt: new Date() });
    return Promise.resolve(true);
  };

  release = (passId: string, attempt: number) => {
    const pass = this.pass(passId);
    if (pass.attempt === attempt) pass.heartbeatAt = new Date(0);
    return Promise.resolve();
  };

  finish = (
    passId: string,
    attempt: number,
    state: 'succeeded' | 'failed',
    outcome: { counts?: RetroPassCounts; error?: 'too_many_attempts' } = {},
  ) => {
    const pass = this.pass(passId);
    if (pass.attempt === attempt) Object.assign(pass, { state, open: false, ...outcome });
    return Promise.resolve();
  };
}

/** Record hashes in their buckets, as the store files them. */
function recordsOf(docs: { id: string; pdq?: string; md5?: string }[]) {
  const buckets = new Map<string, RecordHashDoc[]>();
  for (const { id, pdq, md5 } of docs) {
    const bucket = bucketId(TENANT, bucketOf(id));
    const doc: RecordHashDoc = {
      _id: id,
      tenantId: TENANT,
      bucket,
      images: [{ position: 1, md5: md5 ?? '0'.repeat(32), sha256: '0'.repeat(64), ...(pdq ? { pdq } : {}) }],
      at: new Date(0),
    };
    buckets.set(bucket, [...(buckets.get(bucket) ?? []), doc]);
  }
  const reads: number[] = [];
  return {
    reads,
    bucket: (tenantId: string, n: number) => {
      reads.push(n);
      return Promise.resolve(buckets.get(bucketId(tenantId, n)) ?? []);
    },
  };
}

function runnerWith(
  passes: MemoryPasses,
  records: ReturnType<typeof recordsOf>,
  options: {
    bank?: BankDoc;
    hashes?: HashDoc[];
    act?: (input: RetroMatchInput) => Promise<RetroOutcome>;
    maxAttempts?: number;
    scanRatePerSecond?: number;
    applied?: RetroRunnerOptions['applied'];
  } = {},
) {
  const acted: string[] = [];
  const ended: string[] = [];
  const hashes = options.hashes ?? [hash()];
  const runnerOptions: RetroRunnerOptions = {
    passes,
    records,
    hashes: {
      bankById: () => Promise.resolve(options.bank ?? bank()),
      hashesOfChange: (change) => Promise.resolve(hashes.filter((h) => h.change === change._id)),
      hashesById: (ids) => Promise.resolve(hashes.filter((h) => ids.includes(h._id))),
    },
    applied: options.applied ?? (() => Promise.resolve(true)),
    act: async (input) => {
      acted.push(input.recordId);
      return options.act ? options.act(input) : 'flagged';
    },
    log: pino({ level: 'silent' }),
    scanRatePerSecond: options.scanRatePerSecond ?? 1_000_000,
    actRatePerSecond: 1_000_000,
    leaseMs: 30_000,
    pollMs: 60_000,
    maxAttempts: options.maxAttempts ?? 5,
    chunk: 1,
    onPass: (outcome) => ended.push(outcome),
  };
  return { runner: new RetroRunner(runnerOptions), acted, ended };
}

describe('RetroRunner', () => {
  it('matches every stored record within the bank’s distance, acts on those alone, and ends with the counts', async () => {
    const passes = new MemoryPasses();
    passes.add();
    const records = recordsOf([
      { id: 'rec_near', pdq: flipped(10) },
      { id: 'rec_edge', pdq: flipped(31) },
      { id: 'rec_far', pdq: flipped(40) },
      { id: 'rec_nopdq' },
      { id: 'rec_held', pdq: PDQ },
    ]);
    const { runner, acted } = runnerWith(passes, records, {
      act: (input) => Promise.resolve(input.recordId === 'rec_held' ? 'heldByHumans' : 'flagged'),
    });
    await runner.runDue();
    expect(acted.sort()).toEqual(['rec_edge', 'rec_held', 'rec_near']);
    expect(passes.pass()).toMatchObject({
      state: 'succeeded',
      open: false,
      attempt: 1,
      counts: { scanned: 5, matched: 3, flagged: 2, heldByHumans: 1 },
    });
    expect(records.reads).toEqual([...Array(RECORD_HASH_BUCKETS).keys()]);
  });

  it('matches an exact bank’s hash by equality', async () => {
    const passes = new MemoryPasses();
    passes.add();
    const md5 = 'ab'.repeat(16);
    const records = recordsOf([{ id: 'rec_same', md5 }, { id: 'rec_other' }]);
    const { runner, acted } = runnerWith(passes, records, {
      bank: bank({ kind: 'md5', distance: 0 }),
      hashes: [hash({ value: md5 })],
    });
    await runner.runDue();
    expect(acted).toEqual(['rec_same']);
  });

  it.each([
    ['its bank is negative (a pass never lifts a flag)', { bank: bank({ negative: true }) }],
    ['its bank is disabled', { bank: bank({ enabled: false }) }],
    ['its hash was deconfirmed since', { hashes: [hash({ review: 'deconfirmed' })] }],
    ['its hash was withdrawn since', { hashes: [] }],
  ])('acts on nothing when %s', async (_name, options) => {
    const passes = new MemoryPasses();
    passes.add();
    const { runner, acted } = runnerWith(passes, recordsOf([{ id: 'rec_same', pdq: PDQ }]), options);
    await runner.runDue();
    expect(acted).toEqual([]);
    expect(passes.pass()).toMatchObject({ state: 'succeeded', counts: { matched: 0, flagged: 0 } });
  });

  it('leaves a pass queued while the live index has not applied its change, and runs it once it has', async () => {
    const passes = new MemoryPasses();
    passes.add({ change: `${TENANT}#7` });
    let applied = false;
    const asked: string[] = [];
    const { runner, acted } = runnerWith(passes, recordsOf([{ id: 'rec_same', pdq: PDQ }]), {
      hashes: [hash({ change: `${TENANT}#7` })],
      applied: (tenantId, change) => {
        asked.push(`${tenantId} ${change}`);
        return Promise.resolve(applied);
      },
    });
    // An earlier change still open holds the live index back: a match now would miss the pass's hash.
    await runner.runDue();
    expect(acted).toEqual([]);
    expect(passes.pass()).toMatchObject({ state: 'queued', attempt: 0, open: true });
    applied = true;
    await runner.runDue();
    expect(acted).toEqual(['rec_same']);
    expect(passes.pass()).toMatchObject({ state: 'succeeded', attempt: 1 });
    expect(asked).toEqual([`${TENANT} ${TENANT}#7`, `${TENANT} ${TENANT}#7`]);
  });

  it('reads a hash rewritten by a later change by its id', async () => {
    const passes = new MemoryPasses();
    passes.add();
    const { runner, acted } = runnerWith(passes, recordsOf([{ id: 'rec_same', pdq: PDQ }]), {
      hashes: [hash({ change: `${TENANT}#2`, review: 'confirmed' })],
    });
    await runner.runDue();
    expect(acted).toEqual(['rec_same']);
  });

  it('takes over a pass whose holder went silent, from the bucket it stood at, with the counts from its start', async () => {
    const passes = new MemoryPasses();
    const at = 40;
    const before = { scanned: 7, matched: 2, flagged: 2, heldByHumans: 0 };
    passes.add({
      state: 'running',
      attempt: 1,
      bucket: at,
      bucketCounts: before,
      counts: { ...before, scanned: 9 },
      heartbeatAt: new Date(Date.now() - 60_000),
    });
    passes.claims.docs.set('hrp_1#1', { _id: 'hrp_1#1', passId: 'hrp_1', at: new Date(0) });
    const records = recordsOf([{ id: 'rec_near', pdq: PDQ }]);
    const { runner } = runnerWith(passes, records);
    await runner.runDue();
    expect(records.reads[0]).toBe(at);
    expect(records.reads).toHaveLength(RECORD_HASH_BUCKETS - at);
    expect(passes.pass()).toMatchObject({ state: 'succeeded', attempt: 2 });
    const inRest = bucketOf('rec_near') >= at ? 1 : 0;
    expect(passes.pass().counts).toEqual({ ...before, scanned: 7 + inRest, matched: 2 + inRest, flagged: 2 + inRest });
  });

  it('leaves alone a pass whose holder writes progress', async () => {
    const passes = new MemoryPasses();
    passes.add({ state: 'running', attempt: 1, heartbeatAt: new Date() });
    const records = recordsOf([{ id: 'rec_near', pdq: PDQ }]);
    const { runner } = runnerWith(passes, records);
    await runner.runDue();
    expect(records.reads).toEqual([]);
    expect(passes.pass().attempt).toBe(1);
  });

  it('lets go of a pass when it stops, and the next runner finishes it without losing a record', async () => {
    const passes = new MemoryPasses();
    passes.add();
    const ids = Array.from({ length: 40 }, (_, n) => `rec_${n}`);
    const records = recordsOf(ids.map((id) => ({ id, pdq: PDQ })));
    const holder: { first?: RetroRunner } = {};
    const stopped: Promise<void>[] = [];
    const firstRun = runnerWith(passes, records, {
      act: () => {
        // Stops half-way through the records, as a SIGTERM would.
        if (firstRun.acted.length === 20) stopped.push(holder.first!.stop());
        return Promise.resolve('flagged');
      },
    });
    const first = (holder.first = firstRun.runner);
    await first.runDue();
    await Promise.all(stopped);
    expect(passes.pass()).toMatchObject({ state: 'running', open: true, attempt: 1 });
    expect(passes.pass().heartbeatAt?.getTime()).toBe(0);

    const second = runnerWith(passes, records);
    await second.runner.runDue();
    expect(passes.pass()).toMatchObject({ state: 'succeeded', attempt: 2 });
    expect(new Set([...firstRun.acted, ...second.acted])).toEqual(new Set(ids));
    // Only the bucket in progress is read again.
    const again = firstRun.acted.filter((id) => second.acted.includes(id));
    expect(new Set(again.map(bucketOf)).size).toBeLessThanOrEqual(1);
    expect(passes.pass().counts.flagged).toBe(40);
  });

  it('stops when a later attempt took the pass over, and writes nothing more', async () => {
    const passes = new MemoryPasses();
    passes.add();
    const ids = Array.from({ length: 10 }, (_, n) => `rec_${n}`);
    const { runner, acted } = runnerWith(passes, recordsOf(ids.map((id) => ({ id, pdq: PDQ }))), {
      act: () => {
        // Another moderator found this holder silent and claimed attempt 2.
        if (passes.pass().attempt === 1) passes.pass().attempt = 2;
        return Promise.resolve('flagged');
      },
    });
    await runner.runDue();
    expect(acted).toHaveLength(1);
    expect(passes.pass()).toMatchObject({ state: 'running', attempt: 2, open: true });
    expect(passes.progressWrites.filter((write) => write.attempt === 1)).toEqual([]);
  });

  it('fails a pass after its attempts', async () => {
    const passes = new MemoryPasses();
    passes.add({ state: 'running', attempt: 3, heartbeatAt: new Date(0) });
    const records = recordsOf([{ id: 'rec_near', pdq: PDQ }]);
    const { runner } = runnerWith(passes, records, { maxAttempts: 3 });
    await runner.runDue();
    expect(passes.pass()).toMatchObject({ state: 'failed', error: 'too_many_attempts', open: false });
    expect(records.reads).toEqual([]);
  });

  it('leaves a pass the store failed under to be taken over after the lease', async () => {
    const passes = new MemoryPasses();
    passes.add();
    const { runner } = runnerWith(passes, recordsOf([{ id: 'rec_near', pdq: PDQ }]), {
      act: () => Promise.reject(new UnavailableError('database unavailable')),
    });
    await runner.runDue();
    expect(passes.pass()).toMatchObject({ state: 'running', open: true, attempt: 1 });
  });

  it('skips a record whose match fails for good, and goes on with the others', async () => {
    const passes = new MemoryPasses();
    passes.add();
    const records = recordsOf([
      { id: 'rec_bad', pdq: PDQ },
      { id: 'rec_good', pdq: PDQ },
    ]);
    const { runner, acted } = runnerWith(passes, records, {
      act: (input) =>
        input.recordId === 'rec_bad' ? Promise.reject(new Error('bad record')) : Promise.resolve('flagged'),
    });
    await runner.runDue();
    expect(acted.sort()).toEqual(['rec_bad', 'rec_good']);
    expect(passes.pass()).toMatchObject({ state: 'succeeded', counts: { matched: 2, flagged: 1 } });
  });

  it('paces the records it compares: 10 at 20 a second take at least 0.45 s', async () => {
    const passes = new MemoryPasses();
    passes.add();
    const ids = Array.from({ length: 10 }, (_, n) => `rec_${n}`);
    const { runner } = runnerWith(passes, recordsOf(ids.map((id) => ({ id, pdq: flipped(50) }))), {
      scanRatePerSecond: 20,
    });
    const started = Date.now();
    await runner.runDue();
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
    expect(passes.pass().counts.scanned).toBe(10);
  });

  it.each([
    ['whose reply was lost', (passes: MemoryPasses) => passes.claims.loseNextReply()],
    ['that the pass never recorded (its write failed)', (passes: MemoryPasses) => (passes.failedRecords = 1)],
  ])('runs a pass after a claim %s, once that claim is older than the lease', async (_name, fault) => {
    const passes = new MemoryPasses();
    passes.add();
    fault(passes);
    const records = recordsOf([{ id: 'rec_near', pdq: PDQ }]);
    const { runner, acted, ended } = runnerWith(passes, records);
    await expect(runner.runDue()).rejects.toThrow();
    // Within the lease the claimant may still record it: the pass is left alone.
    await runner.runDue();
    expect(acted).toEqual([]);
    passes.claims.age('hrp_1#1', 31_000);
    await runner.runDue();
    expect(acted).toEqual(['rec_near']);
    expect(passes.pass()).toMatchObject({ state: 'succeeded', attempt: 2 });
    expect(ended).toEqual(['unrecorded', 'succeeded']);
  });

  it('fails a pass whose every attempt left was claimed by a runner that died before recording it', async () => {
    const passes = new MemoryPasses();
    passes.add({ state: 'running', attempt: 1, heartbeatAt: new Date(0) });
    for (const attempt of [2, 3]) {
      passes.claims.docs.set(`hrp_1#${attempt}`, { _id: `hrp_1#${attempt}`, passId: 'hrp_1', at: new Date(0) });
    }
    const records = recordsOf([{ id: 'rec_near', pdq: PDQ }]);
    const { runner } = runnerWith(passes, records, { maxAttempts: 3 });
    await runner.runDue();
    expect(passes.pass()).toMatchObject({ state: 'failed', error: 'too_many_attempts', open: false });
    expect(records.reads).toEqual([]);
  });

  it('two runners never run one attempt: the second finds it claimed', async () => {
    const passes = new MemoryPasses();
    passes.add();
    const records = recordsOf([{ id: 'rec_near', pdq: PDQ }]);
    const a = runnerWith(passes, records);
    const b = runnerWith(passes, records);
    await Promise.all([a.runner.runDue(), b.runner.runDue()]);
    expect([...a.acted, ...b.acted]).toEqual(['rec_near']);
    expect(passes.pass()).toMatchObject({ state: 'succeeded', attempt: 1 });
  });
});
