import { Writable } from 'node:stream';
import pino from 'pino';
import { Registry } from 'prom-client';
import { SharedRateLimiter, type CountsExchange } from './shared-rate-limiter';
import type { Limit, WindowCount } from './window-counter';

const LIMIT: Limit = { requests: 50, windowSeconds: 10 };
const T0 = 1_000_000;

/** The store's part, in memory: one entry per instance; `down` makes every call fail as an unreachable store would. */
function memoryExchange() {
  const docs = new Map<string, WindowCount[]>();
  const calls = { publish: 0, read: 0, sweep: 0 };
  const exchange = {
    docs,
    calls,
    down: false,
    check() {
      if (exchange.down) return Promise.reject(new Error('connection refused'));
      return Promise.resolve();
    },
    async publish(instanceId: string, counts: WindowCount[]) {
      await exchange.check();
      calls.publish += 1;
      docs.set(instanceId, counts);
    },
    async othersCounts(instanceId: string) {
      await exchange.check();
      calls.read += 1;
      return [...docs].filter(([id]) => id !== instanceId).flatMap(([, counts]) => counts);
    },
    async deleteExpired() {
      await exchange.check();
      calls.sweep += 1;
    },
  } satisfies CountsExchange & Record<string, unknown>;
  return exchange;
}

function logCapture() {
  const lines: Array<{ msg: string }> = [];
  const log = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as { msg: string });
        done();
      },
    }),
  );
  return { log, lines };
}

function limiter(exchange: CountsExchange, instanceId: string, clock: { now: number }, registry?: Registry) {
  return new SharedRateLimiter(
    exchange,
    logCapture().log,
    { instanceId, syncIntervalMs: 100, now: () => clock.now },
    registry,
  );
}

const admit = (l: SharedRateLimiter, times: number) =>
  Array.from({ length: times }).filter(() => l.consume('key_1', LIMIT).allowed).length;

describe('shared rate limiter', () => {
  it('holds the limit across two instances once each has exchanged after the other', async () => {
    const exchange = memoryExchange();
    const clock = { now: T0 };
    const a = limiter(exchange, 'a', clock);
    const b = limiter(exchange, 'b', clock);
    expect(admit(a, 30)).toBe(30);
    await a.sync();
    await b.sync();
    expect(admit(b, 30)).toBe(20);
    await b.sync();
    await a.sync();
    expect(admit(a, 5)).toBe(0);
  });

  it('over-admits by at most what the other admitted since it last exchanged', async () => {
    const exchange = memoryExchange();
    const clock = { now: T0 };
    const a = limiter(exchange, 'a', clock);
    const b = limiter(exchange, 'b', clock);
    expect(admit(a, 20)).toBe(20);
    await a.sync();
    await b.sync();
    // Neither has seen the other's next requests: each admits up to the 30 left.
    expect(admit(a, 40)).toBe(30);
    expect(admit(b, 40)).toBe(30);
    await a.sync();
    await b.sync();
    await a.sync();
    expect(admit(a, 1) + admit(b, 1)).toBe(0);
  });

  it('writes its counts only when they moved (or to refresh them), and nothing while it has none', async () => {
    const exchange = memoryExchange();
    const clock = { now: T0 };
    const a = limiter(exchange, 'a', clock);
    await a.sync();
    expect(exchange.calls).toEqual({ publish: 0, read: 1, sweep: 1 });
    admit(a, 3);
    await a.sync();
    await a.sync();
    expect(exchange.calls.publish).toBe(1);
    expect(exchange.docs.get('a')).toEqual([{ key: 'key_1', windowMs: 10_000, start: T0, count: 3 }]);
    clock.now += 5_000;
    await a.sync();
    expect(exchange.calls.publish).toBe(2);
    clock.now = T0 + 11_000; // the slot stopped counting: nothing left to write
    await a.sync();
    expect(exchange.calls.publish).toBe(2);
  });

  it('keeps limiting on the last counts read while the store is down, logs it once and counts the failures', async () => {
    const exchange = memoryExchange();
    const clock = { now: T0 };
    const registry = new Registry();
    const { log, lines } = logCapture();
    const a = new SharedRateLimiter(
      exchange,
      log,
      { instanceId: 'a', syncIntervalMs: 100, now: () => clock.now },
      registry,
    );
    exchange.docs.set('b', [{ key: 'key_1', windowMs: 10_000, start: T0, count: 45 }]);
    await a.sync();
    exchange.down = true;
    await a.sync();
    await a.sync();
    expect(admit(a, 10)).toBe(5);
    exchange.down = false;
    await a.sync();
    expect(exchange.docs.get('a')).toEqual([{ key: 'key_1', windowMs: 10_000, start: T0, count: 5 }]);
    expect(lines.map((line) => line.msg)).toEqual([
      'rate limit counts not exchanged; limiting on the last ones read',
      'rate limit counts exchanged again',
    ]);
    const metric = await registry.getSingleMetricAsString('gateway_rate_limit_syncs_total');
    expect(metric).toContain('gateway_rate_limit_syncs_total{outcome="ok"} 2');
    expect(metric).toContain('gateway_rate_limit_syncs_total{outcome="error"} 2');
  });

  it('writes what it admitted when it stops, so the others keep counting it', async () => {
    const exchange = memoryExchange();
    const clock = { now: T0 };
    const a = limiter(exchange, 'a', clock);
    a.start();
    admit(a, 7);
    await a.stop();
    expect(exchange.docs.get('a')).toEqual([{ key: 'key_1', windowMs: 10_000, start: T0, count: 7 }]);
  });

  it('exchanges once per 5 s while no key is busy, and at once when a key moves by 1 % of its limit', async () => {
    jest.useFakeTimers({ now: T0 });
    try {
      const exchange = memoryExchange();
      const a = new SharedRateLimiter(exchange, logCapture().log, { instanceId: 'a', syncIntervalMs: 100 });
      const roomy: Limit = { requests: 10_000, windowSeconds: 60 };
      a.start();
      await jest.advanceTimersByTimeAsync(60_000);
      const quiet = exchange.calls.read;
      expect(quiet).toBeGreaterThanOrEqual(11);
      expect(quiet).toBeLessThanOrEqual(12);
      // 9 requests a second under a limit of 10,000 a minute: fewer than 100 (1 % of it) between two exchanges, so the
      // pace stays relaxed (one exchange per 5 s), and each exchange publishes what was admitted since the last.
      for (let second = 0; second < 10; second += 1) {
        for (let i = 0; i < 9; i += 1) expect(a.consume('key_1', roomy).allowed).toBe(true);
        await jest.advanceTimersByTimeAsync(1_000);
      }
      const relaxed = exchange.calls.read - quiet;
      expect(relaxed).toBeGreaterThanOrEqual(1);
      expect(relaxed).toBeLessThanOrEqual(3);
      expect(exchange.calls.publish).toBe(relaxed);
      // The 100th request since the last exchange (1 % of the limit) brings the next one within the usual interval.
      await jest.advanceTimersByTimeAsync(5_000);
      const before = exchange.calls.read;
      for (let i = 0; i < 99; i += 1) a.consume('key_1', roomy);
      await jest.advanceTimersByTimeAsync(100);
      expect(exchange.calls.read).toBe(before);
      a.consume('key_1', roomy);
      await jest.advanceTimersByTimeAsync(100);
      expect(exchange.calls.read).toBe(before + 1);
      await a.stop();
    } finally {
      jest.useRealTimers();
    }
  });

  it('exchanges at the configured relaxed pace while no key is busy, never faster than the usual one', async () => {
    jest.useFakeTimers({ now: T0 });
    try {
      const paced = async (syncIntervalMs: number, relaxedSyncMs: number) => {
        const exchange = memoryExchange();
        const a = new SharedRateLimiter(exchange, logCapture().log, { instanceId: 'a', syncIntervalMs, relaxedSyncMs });
        a.start();
        await jest.advanceTimersByTimeAsync(10_000);
        await a.stop();
        return exchange.calls.read;
      };
      // One exchange per 500 ms over 10 s (20, and the one on stop), where the default pace makes two.
      expect(await paced(100, 500)).toBeGreaterThanOrEqual(20);
      expect(await paced(100, 500)).toBeLessThanOrEqual(21);
      expect(await paced(1_000, 100)).toBeLessThanOrEqual(11);
    } finally {
      jest.useRealTimers();
    }
  });

  it('exchanges at the usual pace while a request finds its key at half its limit or more', async () => {
    jest.useFakeTimers({ now: T0 });
    try {
      const exchange = memoryExchange();
      const a = new SharedRateLimiter(exchange, logCapture().log, { instanceId: 'a', syncIntervalMs: 100 });
      // 100 of 200 already admitted by another instance: a request here finds its key at half its limit (and one
      // request is under 1 % of it).
      exchange.docs.set('b', [{ key: 'key_1', windowMs: 60_000, start: T0 - (T0 % 6_000), count: 100 }]);
      const limit: Limit = { requests: 10_000, windowSeconds: 60 };
      a.start();
      await jest.advanceTimersByTimeAsync(5_000);
      const before = exchange.calls.read;
      expect(a.consume('key_1', { ...limit, requests: 200 }).allowed).toBe(true);
      await jest.advanceTimersByTimeAsync(100);
      expect(exchange.calls.read).toBe(before + 1);
      // A key far from its limit leaves the pace relaxed.
      expect(a.consume('key_2', limit).allowed).toBe(true);
      await jest.advanceTimersByTimeAsync(1_000);
      expect(exchange.calls.read).toBe(before + 1);
      await a.stop();
    } finally {
      jest.useRealTimers();
    }
  });
});
