import fc from 'fast-check';
import { WindowCounter, type Limit } from './window-counter';

const TEN_PER_10S: Limit = { requests: 10, windowSeconds: 10 };
/** 20 s after the epoch: the start of a 10-second window. */
const T0 = 20_000;

function admitted(counter: WindowCounter, key: string, limit: Limit, now: number, times: number): number {
  let n = 0;
  for (let i = 0; i < times; i++) if (counter.consume(key, limit, now).allowed) n += 1;
  return n;
}

describe('window counter', () => {
  it('admits the limit, then refuses until the oldest counted requests leave, with what is left and when', () => {
    const counter = new WindowCounter();
    expect(counter.consume('k', TEN_PER_10S, T0 + 1_000)).toEqual({ allowed: true, remaining: 9, resetMs: 11_000 });
    expect(admitted(counter, 'k', TEN_PER_10S, T0 + 2_000, 9)).toBe(9);
    // One request counted in the slot [T0+1s, T0+2s), nine in [T0+2s, T0+3s): the first leaves at T0+12s.
    expect(counter.consume('k', TEN_PER_10S, T0 + 9_999)).toEqual({ allowed: false, remaining: 0, resetMs: 2_001 });
    expect(counter.consume('k', TEN_PER_10S, T0 + 11_999).allowed).toBe(false);
    expect(counter.consume('k', TEN_PER_10S, T0 + 12_000)).toEqual({ allowed: true, remaining: 0, resetMs: 1_000 });
    expect(counter.consume('k', TEN_PER_10S, T0 + 12_500)).toEqual({ allowed: false, remaining: 0, resetMs: 500 });
  });

  it('never admits twice the limit across a window boundary (5 per 60 s)', () => {
    const counter = new WindowCounter();
    const limit: Limit = { requests: 5, windowSeconds: 60 };
    expect(admitted(counter, 'k', limit, 59_000, 5)).toBe(5);
    expect(admitted(counter, 'k', limit, 60_001, 5)).toBe(0);
    expect(admitted(counter, 'k', limit, 118_999, 5)).toBe(0);
    expect(admitted(counter, 'k', limit, 120_000, 5)).toBe(5);
  });

  it('admits at most the limit in every window of its length, whatever the timing', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.integer({ min: 0, max: 40_000 }), { maxLength: 200 }),
        (requests, windowSeconds, offsets) => {
          const counter = new WindowCounter();
          const limit: Limit = { requests, windowSeconds };
          const times = offsets.map((offset) => T0 + offset).sort((a, b) => a - b);
          const admittedAt = times.filter((now) => counter.consume('k', limit, now).allowed);
          const windowMs = windowSeconds * 1000;
          for (const start of admittedAt) {
            expect(admittedAt.filter((t) => t >= start && t < start + windowMs).length).toBeLessThanOrEqual(requests);
          }
          // And it is not stingier than the limit over a window and a slot.
          if (times.length > 0 && times[times.length - 1]! - times[0]! < windowMs) {
            expect(admittedAt.length).toBe(Math.min(requests, times.length));
          }
        },
      ),
    );
  });

  it.each([
    ['another key', 'other', TEN_PER_10S],
    ['the same key under another window length', 'k', { requests: 10, windowSeconds: 60 }],
  ])('counts %s apart', (_name, key, limit) => {
    const counter = new WindowCounter();
    expect(admitted(counter, 'k', TEN_PER_10S, T0, 10)).toBe(10);
    expect(admitted(counter, key, limit, T0, 10)).toBe(10);
    expect(counter.consume('k', TEN_PER_10S, T0).allowed).toBe(false);
  });

  it.each([
    ['others reported less than the limit', 7, 3],
    ['others reported the limit', 10, 0],
    ['others reported more than the limit', 25, 0],
  ])('admits only what is left when %s', (_name, others, expected) => {
    const counter = new WindowCounter();
    counter.absorb([{ key: 'k', windowMs: 10_000, start: T0, count: others }], T0);
    expect(admitted(counter, 'k', TEN_PER_10S, T0 + 5, 20)).toBe(expected);
  });

  it("sums the others' reports of the slots counted and ignores other windows and slots no longer counted", () => {
    const counter = new WindowCounter();
    counter.absorb(
      [
        { key: 'k', windowMs: 10_000, start: T0, count: 3 },
        { key: 'k', windowMs: 10_000, start: T0, count: 4 },
        { key: 'k', windowMs: 60_000, start: 0, count: 100 },
        { key: 'k', windowMs: 10_000, start: T0 - 11_000, count: 100 },
      ],
      T0 + 1,
    );
    expect(counter.consume('k', TEN_PER_10S, T0 + 2)).toEqual({ allowed: true, remaining: 2, resetMs: 10_998 });
  });

  it("replaces, not adds to, the others' earlier reports", () => {
    const counter = new WindowCounter();
    counter.absorb([{ key: 'k', windowMs: 10_000, start: T0, count: 9 }], T0);
    counter.absorb([{ key: 'k', windowMs: 10_000, start: T0, count: 5 }], T0);
    expect(admitted(counter, 'k', TEN_PER_10S, T0, 10)).toBe(5);
  });

  it('reports its own counts of windows not ended, largest first when capped, and forgets ended ones', () => {
    const counter = new WindowCounter();
    admitted(counter, 'a', TEN_PER_10S, T0, 2);
    admitted(counter, 'b', TEN_PER_10S, T0, 5);
    admitted(counter, 'c', { requests: 10, windowSeconds: 60 }, T0, 1);
    counter.consume('refused', { requests: 0, windowSeconds: 10 }, T0);
    expect(counter.report(T0 + 1)).toEqual([
      { key: 'a', windowMs: 10_000, start: T0, count: 2 },
      { key: 'b', windowMs: 10_000, start: T0, count: 5 },
      { key: 'c', windowMs: 60_000, start: 18_000, count: 1 },
    ]);
    expect(counter.report(T0 + 1, 1)).toEqual([{ key: 'b', windowMs: 10_000, start: T0, count: 5 }]);
    expect(counter.report(T0 + 10_999)).toHaveLength(3);
    expect(counter.report(T0 + 11_000)).toEqual([{ key: 'c', windowMs: 60_000, start: 18_000, count: 1 }]);
    expect(counter.version).toBe(8);
  });
});

/**
 * Instances exchanging reports through a shared map, in any order of requests and exchanges within one window. After
 * every admission, the admitted total is at most the limit plus what the other instances admitted that the admitting
 * one had not absorbed yet; when every instance has absorbed every other's counts before each request, exactly the
 * limit is admitted.
 */
describe('window counter across instances', () => {
  type Op = { instance: number; kind: 'request' | 'exchange' };

  function simulate(instances: number, limit: number, ops: Op[]) {
    const counters = Array.from({ length: instances }, () => new WindowCounter());
    const store = new Map<number, ReturnType<WindowCounter['report']>>();
    /** What each instance admitted so far, and what each instance last absorbed of each other one. */
    const own = Array.from({ length: instances }, () => 0);
    const seen = counters.map(() => Array.from({ length: instances }, () => 0));
    const cap: Limit = { requests: limit, windowSeconds: 60 };
    let total = 0;
    let requests = 0;
    for (const op of ops) {
      const i = op.instance;
      if (op.kind === 'exchange') {
        store.set(i, counters[i]!.report(T0));
        counters[i]!.absorb(
          [...store].filter(([j]) => j !== i).flatMap(([, counts]) => counts),
          T0,
        );
        for (const [j, counts] of store) seen[i]![j] = counts.reduce((sum, c) => sum + c.count, 0);
        continue;
      }
      requests += 1;
      if (!counters[i]!.consume('k', cap, T0).allowed) continue;
      own[i]! += 1;
      total += 1;
      const unseen = own.reduce((sum, n, j) => (j === i ? sum : sum + n - seen[i]![j]!), 0);
      expect(total).toBeLessThanOrEqual(limit + unseen);
    }
    return { total, requests, own };
  }

  const op = (instances: number) =>
    fc.record({
      instance: fc.nat({ max: instances - 1 }),
      kind: fc.constantFrom<Op['kind'][]>('request', 'exchange'),
    });

  it('never admits more than the limit plus what it had not seen, nor less than the limit when it refuses', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 2, max: 4 })
          .chain((instances) =>
            fc.tuple(
              fc.constant(instances),
              fc.integer({ min: 1, max: 30 }),
              fc.array(op(instances), { maxLength: 300 }),
            ),
          ),
        ([instances, limit, ops]) => {
          const { total, requests, own } = simulate(instances, limit, ops);
          expect(total).toBeGreaterThanOrEqual(Math.min(limit, requests));
          for (const n of own) expect(n).toBeLessThanOrEqual(limit);
        },
      ),
    );
  });

  it('admits exactly the limit when every instance exchanges after every request', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        fc.array(fc.nat({ max: 2 }), { minLength: 1, maxLength: 100 }),
        (limit, targets) => {
          const ops = targets.flatMap((instance): Op[] => [
            { instance, kind: 'request' },
            // Two rounds: every instance writes, then every instance reads what all wrote.
            ...[0, 1, 2, 0, 1, 2].map((i): Op => ({ instance: i, kind: 'exchange' })),
          ]);
          expect(simulate(3, limit, ops).total).toBe(Math.min(limit, targets.length));
        },
      ),
    );
  });
});
