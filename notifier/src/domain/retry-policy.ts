/** Jitter spreads retries of many deliveries that failed together (an endpoint outage) over ±15 % of the delay. */
export const JITTER = 0.15;

/**
 * Delay before the next attempt after `attempts` failed ones, or null when the schedule is exhausted.
 * `scheduleS[0]` follows the first attempt. A receiver's `Retry-After` (already capped) pushes the retry later,
 * never earlier than the schedule: it says when the receiver is ready, the schedule bounds how hard we push.
 */
export function nextDelayMs(options: {
  attempts: number;
  scheduleS: readonly number[];
  retryAfterMs?: number;
  /** In [0, 1); injectable for tests. */
  random?: number;
}): number | null {
  const base = options.scheduleS[options.attempts - 1];
  if (base === undefined) return null;
  const random = options.random ?? Math.random();
  const jittered = base * 1000 * (1 + (random * 2 - 1) * JITTER);
  return Math.round(Math.max(jittered, options.retryAfterMs ?? 0));
}

/** `Retry-After` as milliseconds from `now` (delta-seconds or an HTTP date), capped; undefined if absent or bad. */
export function parseRetryAfter(header: string | undefined, now: Date, capMs: number): number | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  if (value === '') return undefined;
  let ms: number;
  if (/^\d+$/.test(value)) ms = Number(value) * 1000;
  else {
    // An HTTP date names its weekday and month; refusing anything without letters keeps Date.parse's lenient
    // readings ("-5" as a year) out.
    if (!/[a-z]/i.test(value)) return undefined;
    const date = Date.parse(value);
    if (Number.isNaN(date)) return undefined;
    ms = date - now.getTime();
  }
  return Math.min(Math.max(ms, 0), capMs);
}
