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

  it('slows its exchanges to one per 5 s after 10 s without a request, and a request brings the usual pace back', async () => {
    jest.useFakeTimers({ now: T0 });
    try {
      const exchange = memoryExchange();
      const a = new SharedRateLimiter(exchange, logCapture().log, { instanceId: 'a', syncIntervalMs: 100 });
      a.start();
      await jest.advanceTimersByTimeAsync(10_000);
      const busy = exchange.calls.read;
      expect(busy).toBeGreaterThanOrEqual(90);
      await jest.advanceTimersByTimeAsync(60_000);
      const idle = exchange.calls.read - busy;
      expect(idle).toBeGreaterThanOrEqual(11);
      expect(idle).toBeLessThanOrEqual(14);
      // The first request cuts the idle wait short: counts are exchanged within the usual interval.
      const before = exchange.calls.read;
      expect(admit(a, 1)).toBe(1);
      await jest.advanceTimersByTimeAsync(100);
      expect(exchange.calls.read).toBe(before + 1);
      expect(exchange.calls.publish).toBe(1);
      await jest.advanceTimersByTimeAsync(1_000);
      expect(exchange.calls.read - before).toBeGreaterThanOrEqual(10);
      await a.stop();
    } finally {
      jest.useRealTimers();
    }
  });
});
