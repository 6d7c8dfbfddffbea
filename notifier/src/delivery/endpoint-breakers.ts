import type { Pause } from '../store/queued-doc';

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
 * store, not in memory: parked `backlogParkMs` ahead (an hour by default), a few of them kept as probes paced as the
 * pauses (see BucketSweeper.park), and brought back at once when an attempt succeeds. A receiver that is down costs a
 * probe a minute and a read of its backlog an hour, not an attempt (and its writes) per pending delivery, and the
 * notifier's slots go to the endpoints that answer. A delivery's retry schedule is therefore a minimum: while its
 * endpoint is down, its next attempt waits for the endpoint to answer.
 */
export class EndpointBreakers {
  private readonly breakers = new Map<string, Breaker>();

  /** `backlogParkMs`: how far ahead an open breaker's backlog is parked (how often one nobody answers is read again). */
  constructor(private readonly backlogParkMs = 3_600_000) {}

  /** How many attempts the endpoint may have in flight now: `concurrency`, 1 for a probe, or 0 while paused. */
  allowed(endpointId: string, now: number, concurrency: number): number {
    const breaker = this.breakers.get(endpointId);
    if (!breaker || breaker.failures < OPEN_AFTER_FAILURES) return concurrency;
    return now >= breaker.pausedUntil ? 1 : 0;
  }

  /**
   * How the endpoint's backlog waits while its breaker is open (pausing or probing), or undefined: see Pause. Probes
   * are kept a longest pause apart at most, the pace of the probes of an endpoint that stays down.
   */
  pause(endpointId: string, now: number): Pause | undefined {
    const breaker = this.breakers.get(endpointId);
    if (!breaker || breaker.failures < OPEN_AFTER_FAILURES) return undefined;
    return { until: breaker.pausedUntil, backlogUntil: now + this.backlogParkMs, probeEveryMs: LONGEST_PAUSE_MS };
  }

  /** Closes the endpoint's breaker; true when it was open (its backlog may be parked). */
  succeeded(endpointId: string): boolean {
    const breaker = this.breakers.get(endpointId);
    this.breakers.delete(endpointId);
    return breaker !== undefined && breaker.failures >= OPEN_AFTER_FAILURES;
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
