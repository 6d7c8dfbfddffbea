import type { BacktestJobDoc, Topics } from '@vigil/proto';
import { RateLimitedError } from '../errors';
import { WindowCounter } from '../rate-limit/window-counter';
import { createBacktest } from './create-backtest';
import type { BacktestSettings, UseCaseDeps } from './deps';

const HOUR_MS = 3_600_000;

/** The use case with in-memory fakes: a store that holds `maxRunning` slots, a limiter on a clock the test moves. */
function fakes(settings: Partial<BacktestSettings> = {}) {
  let now = Date.UTC(2026, 2, 1, 10);
  const counter = new WindowCounter();
  const running = new Map<string, Set<string>>();
  const discarded: string[] = [];
  const sent: string[] = [];
  /** Jobs the store was told were handed over. */
  const noted: string[] = [];
  let sending = (): Promise<void> => Promise.resolve();
  const deps = {
    backtestSettings: {
      maxRunning: 1,
      maxRecords: 1000,
      maxAiCalls: 100,
      ttlSeconds: 3600,
      maxPerHour: 3,
      ...settings,
    },
    promptRulesEnabled: false,
    topics: { backtests: 'vigil.backtests.v1' } as Topics,
    rateLimiter: { consume: (key, limit) => counter.consume(key, limit, now) },
    commands: {
      send: async (command) => {
        await sending();
        sent.push(command.id);
      },
    },
    backtests: {
      create: (job: BacktestJobDoc, maxRunning: number) => {
        const held = running.get(job.tenantId) ?? new Set<string>();
        if (held.size >= maxRunning) return Promise.resolve(false);
        running.set(job.tenantId, held.add(job._id));
        return Promise.resolve(true);
      },
      discard: (job: BacktestJobDoc) => {
        discarded.push(job._id);
        running.get(job.tenantId)?.delete(job._id);
        return Promise.resolve(true);
      },
      sent: (job: BacktestJobDoc) => Promise.resolve(void noted.push(job._id)),
    },
  } as Partial<UseCaseDeps> as UseCaseDeps;
  /** The tenant's running backtest ends (succeeds, or is cancelled): its slot is free. */
  const finish = (tenantId: string) => running.get(tenantId)?.clear();
  const create = (tenantId: string) =>
    createBacktest(deps, { tenantId, author: 'api_key:k', requestId: 'r' }, { version: 0 }).then(
      (state) => {
        finish(tenantId);
        return { created: state.job._id };
      },
      (err: unknown) => ({ refused: err }),
    );
  const failSends = (err: Error) => (sending = () => Promise.reject(err));
  return { deps, create, finish, discarded, sent, noted, running, failSends, advance: (ms: number) => (now += ms) };
}

describe('how often a tenant creates backtests', () => {
  it('creates BACKTEST_MAX_PER_HOUR, then refuses with 429 rate_limited and Retry-After, storing nothing', async () => {
    const { create, discarded, sent, running } = fakes();
    for (let i = 0; i < 3; i += 1) expect(await create('ten_a')).toHaveProperty('created');
    const refused = (await create('ten_a')) as { refused: RateLimitedError };
    expect(refused.refused).toBeInstanceOf(RateLimitedError);
    expect(refused.refused).toMatchObject({
      code: 'rate_limited',
      retriable: true,
      details: { limit: 3, windowSeconds: 3600 },
    });
    const retryAfter = Number(refused.refused.headers?.['Retry-After']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(3600 + 360);
    // The refused job was stored only to take its slot: discarded, its slot free, never handed to a moderator.
    expect(discarded).toHaveLength(1);
    expect(running.get('ten_a')?.size ?? 0).toBe(0);
    expect(sent).toHaveLength(3);
  });

  it('counts each tenant apart, and admits again once the hour has passed', async () => {
    const { create, advance } = fakes({ maxPerHour: 1 });
    expect(await create('ten_a')).toHaveProperty('created');
    expect(await create('ten_a')).toHaveProperty('refused');
    expect(await create('ten_b')).toHaveProperty('created');
    advance(HOUR_MS + HOUR_MS / 10);
    expect(await create('ten_a')).toHaveProperty('created');
  });

  it('counts no request refused for another reason: a backtest running, or a bound', async () => {
    const { deps, create, finish } = fakes({ maxPerHour: 2 });
    const tenant = { tenantId: 'ten_a', author: 'api_key:k', requestId: 'r' };
    await createBacktest(deps, tenant, { version: 0 });
    for (let i = 0; i < 5; i += 1) {
      await expect(createBacktest(deps, tenant, { version: 0 })).rejects.toMatchObject({ code: 'backtest_running' });
      await expect(createBacktest(deps, tenant, { version: 0, limit: 5000 })).rejects.toMatchObject({
        code: 'backtest_too_large',
      });
    }
    finish('ten_a');
    expect(await create('ten_a')).toHaveProperty('created');
    expect(await create('ten_a')).toHaveProperty('refused');
  });

  it('has no bound with BACKTEST_MAX_PER_HOUR=0', async () => {
    const { create } = fakes({ maxPerHour: 0 });
    for (let i = 0; i < 50; i += 1) expect(await create('ten_a')).toHaveProperty('created');
  });
});

describe('handing a backtest over to the moderators', () => {
  it('notes a job whose start command was sent, so that its slot is never released as unsent', async () => {
    const { create, noted } = fakes();
    const made = (await create('ten_a')) as { created: string };
    expect(noted).toEqual([made.created]);
  });

  it('discards a job whose start command could not be sent, freeing its slot, and never notes it sent', async () => {
    const { deps, discarded, noted, running, failSends } = fakes();
    const broker = new Error('broker away');
    failSends(broker);
    await expect(
      createBacktest(deps, { tenantId: 'ten_a', author: 'api_key:k', requestId: 'r' }, { version: 0 }),
    ).rejects.toBe(broker);
    expect(discarded).toHaveLength(1);
    expect(noted).toEqual([]);
    expect(running.get('ten_a')?.size ?? 0).toBe(0);
  });
});
