import { backoffMs, retry, type BackoffPolicy } from './retry';

class Transient extends Error {}
class Permanent extends Error {}

/** An attempt that fails with the given errors in turn, then resolves 'done'. */
function failing(...errors: Error[]) {
  const calls: number[] = [];
  const attempt = (index: number) => {
    calls.push(index);
    const err = errors[index];
    return err ? Promise.reject(err) : Promise.resolve('done');
  };
  return { attempt, calls };
}

describe('retry', () => {
  const backoff: BackoffPolicy = { initialMs: 100, maxMs: 1000 };
  const retriable = (err: unknown) => err instanceof Transient;

  it.each([
    {
      name: 'resolves at once when the first attempt holds',
      errors: [],
      maxAttempts: undefined,
      outcome: 'done',
      attempts: 1,
      sleeps: [],
    },
    {
      name: 'retries retriable failures until an attempt holds',
      errors: [new Transient(), new Transient(), new Transient()],
      maxAttempts: undefined,
      outcome: 'done',
      attempts: 4,
      sleeps: [100, 200, 400],
    },
    {
      name: 'throws a failure that is not retriable without waiting',
      errors: [new Permanent()],
      maxAttempts: undefined,
      outcome: Permanent,
      attempts: 1,
      sleeps: [],
    },
    {
      name: 'stops retrying at the first failure that is not retriable',
      errors: [new Transient(), new Permanent()],
      maxAttempts: undefined,
      outcome: Permanent,
      attempts: 2,
      sleeps: [100],
    },
    {
      name: 'throws the last failure when the bound is reached',
      errors: [new Transient(), new Transient(), new Transient()],
      maxAttempts: 3,
      outcome: Transient,
      attempts: 3,
      sleeps: [100, 200],
    },
    {
      name: 'holds the delay at maxMs',
      errors: Array.from({ length: 6 }, () => new Transient()),
      maxAttempts: undefined,
      outcome: 'done',
      attempts: 7,
      sleeps: [100, 200, 400, 800, 1000, 1000],
    },
  ])('$name', async ({ errors, maxAttempts, outcome, attempts, sleeps }) => {
    const { attempt, calls } = failing(...errors);
    const slept: number[] = [];
    const retried: number[] = [];
    const run = retry(attempt, {
      backoff: { ...backoff, jitter: 0 },
      retriable,
      maxAttempts,
      onRetry: (_err, index) => void retried.push(index),
      sleep: (ms) => {
        slept.push(ms);
        return Promise.resolve();
      },
    });
    if (typeof outcome === 'string') await expect(run).resolves.toBe(outcome);
    else await expect(run).rejects.toBeInstanceOf(outcome);
    expect(calls).toEqual(Array.from({ length: attempts }, (_, index) => index));
    expect(slept).toEqual(sleeps);
    expect(retried).toEqual(sleeps.map((_, index) => index));
  });

  it('retries every failure when no retriable test is given', async () => {
    const { attempt } = failing(new Permanent(), new Error('other'));
    await expect(retry(attempt, { backoff, sleep: () => Promise.resolve() })).resolves.toBe('done');
  });

  it('retries at once, without sleeping, when the delay is zero', async () => {
    const { attempt } = failing(new Transient(), new Transient());
    const sleep = jest.fn(() => Promise.resolve());
    await expect(retry(attempt, { backoff: { initialMs: 0, maxMs: 0 }, sleep })).resolves.toBe('done');
    expect(sleep).not.toHaveBeenCalled();
  });

  it('ends with the failure of a sleep (a lost Kafka heartbeat)', async () => {
    const { attempt, calls } = failing(new Transient(), new Transient());
    const lost = new Error('rebalancing');
    await expect(retry(attempt, { backoff, sleep: () => Promise.reject(lost) })).rejects.toBe(lost);
    expect(calls).toEqual([0]);
  });

  it('waits on a timer by default', async () => {
    jest.useFakeTimers();
    try {
      const { attempt, calls } = failing(new Transient());
      const run = retry(attempt, { backoff: { initialMs: 100, maxMs: 100, jitter: 0 } });
      await jest.advanceTimersByTimeAsync(99);
      expect(calls).toEqual([0]);
      await jest.advanceTimersByTimeAsync(1);
      await expect(run).resolves.toBe('done');
      expect(calls).toEqual([0, 1]);
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('backoffMs', () => {
  it.each([
    { growth: 'exponential' as const, delays: [200, 400, 800, 1600, 3000, 3000] },
    { growth: 'linear' as const, delays: [200, 400, 600, 800, 1000, 1200] },
  ])('grows $growth up to maxMs', ({ growth, delays }) => {
    const policy: BackoffPolicy = { initialMs: 200, maxMs: 3000, growth, jitter: 0 };
    expect(delays.map((_, index) => backoffMs(policy, index + 1))).toEqual(delays);
  });

  it.each([
    { jitter: undefined, random: 0, delay: 400 },
    { jitter: undefined, random: 0.5, delay: 600 },
    { jitter: undefined, random: 0.999, delay: 799.6 },
    { jitter: 0, random: 0.7, delay: 800 },
    { jitter: 1, random: 0, delay: 0 },
    { jitter: 0.25, random: 0.5, delay: 700 },
  ])(
    'draws the delay in [(1 - jitter) × d, d]: jitter $jitter, random $random → $delay ms',
    ({ jitter, random, delay }) => {
      const policy: BackoffPolicy = { initialMs: 200, maxMs: 5000, jitter };
      expect(backoffMs(policy, 3, () => random)).toBeCloseTo(delay, 6);
    },
  );

  it('stays within [d / 2, d] with the default jitter', () => {
    const policy: BackoffPolicy = { initialMs: 200, maxMs: 30000 };
    for (let failures = 1; failures <= 40; failures += 1) {
      const ceiling = Math.min(30000, 200 * 2 ** (failures - 1));
      const delay = backoffMs(policy, failures);
      expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
      expect(delay).toBeLessThanOrEqual(ceiling);
    }
  });

  it('stays finite after many failures', () => {
    expect(backoffMs({ initialMs: 200, maxMs: 30000, jitter: 0 }, 10_000)).toBe(30000);
  });
});
