/** Failures in a row after which an endpoint is given one attempt at a time, after a pause. */
const OPEN_AFTER_FAILURES = 5;
const FIRST_PAUSE_MS = 1_000;
const LONGEST_PAUSE_MS = 60_000;

interface Breaker {
  failures: number;
  /** Until then the endpoint gets no attempt; after it, one (a probe). */
  pausedUntil: number;
}

/**
 * Per-endpoint circuit breakers, in this process's memory. An endpoint that failed OPEN_AFTER_FAILURES attempts in a
 * row (refused connections, timeouts, 5xx…) gets no attempt for a pause that doubles with each further failure, up to
 * LONGEST_PAUSE_MS, then one probe at a time until an attempt succeeds. Its due deliveries wait meanwhile in the
 * store, moved to the bucket of the pause's end by one write per bucket (see DueQueue.claim), not in memory: a receiver that is down costs a probe a minute, not an attempt
 * (and its writes) per pending delivery, and the notifier's slots go to the endpoints that answer. A delivery's retry
 * schedule is therefore a minimum: while its endpoint is down, its next attempt waits for the endpoint to answer.
 */
export class EndpointBreakers {
  private readonly breakers = new Map<string, Breaker>();

  /** How many attempts the endpoint may have in flight now: `concurrency`, 1 for a probe, or 0 while paused. */
  allowed(endpointId: string, now: number, concurrency: number): number {
    const breaker = this.breakers.get(endpointId);
    if (!breaker || breaker.failures < OPEN_AFTER_FAILURES) return concurrency;
    return now >= breaker.pausedUntil ? 1 : 0;
  }

  /** Until when the endpoint gets no attempt at all (its breaker open and pausing), or undefined. */
  pausedUntil(endpointId: string, now: number): number | undefined {
    const breaker = this.breakers.get(endpointId);
    if (!breaker || breaker.failures < OPEN_AFTER_FAILURES || now >= breaker.pausedUntil) return undefined;
    return breaker.pausedUntil;
  }

  succeeded(endpointId: string): void {
    this.breakers.delete(endpointId);
  }

  failed(endpointId: string, now: number): void {
    const breaker = this.breakers.get(endpointId) ?? { failures: 0, pausedUntil: 0 };
    breaker.failures += 1;
    if (breaker.failures >= OPEN_AFTER_FAILURES) {
      const doublings = Math.min(breaker.failures - OPEN_AFTER_FAILURES, 10);
      breaker.pausedUntil = now + Math.min(LONGEST_PAUSE_MS, FIRST_PAUSE_MS * 2 ** doublings);
    }
    this.breakers.set(endpointId, breaker);
  }
}
