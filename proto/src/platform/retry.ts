// The one retry helper of the services: every loop that tries again after a failure takes its delays, its bound and
// its idea of what is worth retrying from here. One small module rather than a library: p-retry 6+ is ESM-only (the
// services compile to CommonJS), and the loops need what the libraries do not give together: a sleep the caller
// replaces (heartbeating a Kafka partition, waking early), the attempt number inside the attempt, and run loops that
// only need the delay.
import type { Logger } from 'pino';

export interface BackoffPolicy {
  /** Delay after the first failure, milliseconds. */
  initialMs: number;
  /** Longest delay, milliseconds. */
  maxMs: number;
  /** `exponential` doubles the delay after each further failure; `linear` adds `initialMs`. Default exponential. */
  growth?: 'exponential' | 'linear';
  /**
   * Share of the delay drawn at random, 0–1: the delay is uniform in [(1 − jitter) × d, d], so retries of many
   * callers that failed together spread out and none waits longer than the schedule says. Default 0.5.
   */
  jitter?: number;
}

/** Delay before the next attempt after `failures` (≥ 1) failures in a row, milliseconds. */
export function backoffMs(policy: BackoffPolicy, failures: number, random: () => number = Math.random): number {
  const { initialMs, maxMs, growth = 'exponential', jitter = 0.5 } = policy;
  const steps = Math.max(0, failures - 1);
  // The exponent is capped so the product stays finite; maxMs caps the delay long before.
  const base = growth === 'linear' ? initialMs * (steps + 1) : initialMs * 2 ** Math.min(steps, 30);
  const ceiling = Math.min(maxMs, base);
  return ceiling * (1 - jitter) + random() * ceiling * jitter;
}

export interface RetryOptions {
  backoff: BackoffPolicy;
  /** Whether a failure is worth another attempt; one that is not is thrown at once. Default: every failure. */
  retriable?: (err: unknown) => boolean;
  /** Attempts in all, the first included, before the last failure is thrown. Default: no bound. */
  maxAttempts?: number;
  /** Called after a failed attempt that will be retried, before the delay; `attempt` counts from 0. */
  onRetry?: (err: unknown, attempt: number, delayMs: number) => void | Promise<void>;
  /** Waits `ms`; a failure it throws ends the retries. Default: a timer. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `attempt` (given its number, from 0) until it resolves, a failure is not retriable, or the bound is reached. */
export async function retry<T>(attempt: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const { backoff, retriable = () => true, maxAttempts = Infinity, onRetry, random } = options;
  const wait = options.sleep ?? sleep;
  for (let index = 0; ; index += 1) {
    try {
      return await attempt(index);
    } catch (err) {
      if (!retriable(err) || index + 1 >= maxAttempts) throw err;
      const delayMs = backoffMs(backoff, index + 1, random);
      await onRetry?.(err, index, delayMs);
      // A zero delay retries at once, without yielding to the event loop.
      if (delayMs > 0) await wait(delayMs);
    }
  }
}

/** Start-up steps wait for their dependency (readiness stays 503 meanwhile) rather than crash-looping. */
export async function untilDone(log: Logger, what: string, step: () => Promise<unknown>): Promise<void> {
  await retry(step, {
    // 0.5 s more after each failure, up to 5 s.
    backoff: { initialMs: 500, maxMs: 5000, growth: 'linear' },
    onRetry: (err, attempt) => log.warn({ err, attempt: attempt + 1, what }, 'start-up step failed, retrying'),
  });
}
