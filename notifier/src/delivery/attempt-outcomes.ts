import type { EndpointStateDoc, WebhookEndpointDoc } from '@vigil/proto';
import type { Logger } from 'pino';
import { nextDelayMs, parseRetryAfter } from '../domain/retry-policy';
import type { DeliveryAttempt, DeliveryDoc, DeliveryStore } from '../store/delivery-store';
import type { EndpointHealth } from './endpoint-health';
import type { SendResult } from './http-sender';

/** Bounded label set of `notifier_deliveries_total`. */
export type AttemptResult =
  | 'success'
  | 'http_error'
  | 'gone'
  | 'timeout'
  | 'network_error'
  | 'ssrf_refused'
  | 'invalid_url'
  | 'payload_unavailable'
  | 'no_active_secret';

/** What an attempt came to, before it is written: the attempt, the delivery's next state, and what follows the write. */
export interface Outcome {
  attempt: DeliveryAttempt;
  next: { state: 'pending'; dueAt: Date } | { state: 'succeeded' | 'failed' };
  /** Endpoint health writes and the log line, once the outcome is stored. */
  after(): Promise<void>;
}

export interface AttemptOutcomesOptions {
  store: Pick<DeliveryStore, 'recordAttempt'>;
  health: Pick<EndpointHealth, 'succeeded' | 'failingSince' | 'disable'>;
  retryScheduleS: readonly number[];
  retryAfterMaxMs: number;
  disableAfterMs: number;
  onAttempt?: (result: AttemptResult, durationMs: number) => void;
  /** An attempt's outcome was not written: the delivery was no longer leased to this worker (see `record`). */
  onOutcomeNotRecorded?: () => void;
  /** The retry delay's jitter draw, in [0, 1); absent, a random one. */
  random?: () => number;
}

/** How a receiver's answer counts: the breaker hears of it too, and a 410 disables the endpoint instead. */
export function answerKind(statusCode: number | undefined): 'success' | 'gone' | 'failure' {
  if (statusCode !== undefined && statusCode >= 200 && statusCode < 300) return 'success';
  return statusCode === 410 ? 'gone' : 'failure';
}

/**
 * Decides what follows an attempt: the delivery's next state (succeeded, a retry by the schedule, or failed), what the
 * endpoint's health hears once that is stored, and the write itself under the delivery's lease. Sends nothing.
 */
export class AttemptOutcomes {
  constructor(private readonly options: AttemptOutcomesOptions) {}

  /** The outcome of an attempt the receiver answered (or that failed in the call), started at `at`. */
  async answered(
    doc: DeliveryDoc,
    endpoint: WebhookEndpointDoc,
    state: EndpointStateDoc | null,
    at: Date,
    result: SendResult,
    log: Logger,
  ): Promise<Outcome> {
    const attempt: DeliveryAttempt = {
      at,
      durationMs: result.durationMs,
      ...(result.statusCode !== undefined ? { statusCode: result.statusCode } : {}),
      ...(result.error !== undefined ? { error: result.error } : {}),
      ...(result.responseBody !== undefined ? { responseBody: result.responseBody } : {}),
    };
    const code = result.statusCode;
    const kind = answerKind(code);
    if (kind === 'success') {
      this.options.onAttempt?.('success', result.durationMs);
      return {
        attempt,
        next: { state: 'succeeded' },
        after: async () => {
          await this.options.health.succeeded(endpoint, state, log);
          log.info({ statusCode: code, durationMs: result.durationMs }, 'webhook delivered');
        },
      };
    }
    if (kind === 'gone') {
      this.options.onAttempt?.('gone', result.durationMs);
      return {
        attempt,
        next: { state: 'failed' },
        after: async () => {
          if (await this.options.health.disable(endpoint, 'gone', new Date(), log)) log.warn('endpoint disabled: gone');
        },
      };
    }
    return this.failed(doc, endpoint, attempt, log, result);
  }

  /** Decides what follows a failed attempt: the next one by the schedule, or none after the last. */
  async failed(
    doc: DeliveryDoc,
    endpoint: WebhookEndpointDoc,
    attempt: DeliveryAttempt,
    log: Logger,
    result?: SendResult,
  ): Promise<Outcome> {
    const label: AttemptResult = (attempt.error as AttemptResult | undefined) ?? 'http_error';
    this.options.onAttempt?.(label, attempt.durationMs);
    const now = new Date();
    const delay = nextDelayMs({
      attempts: doc.cycleAttempts + 1,
      scheduleS: this.options.retryScheduleS,
      retryAfterMs: parseRetryAfter(result?.retryAfter, now, this.options.retryAfterMaxMs),
      random: this.options.random?.(),
    });
    const failingSince = await this.options.health.failingSince(endpoint, now);
    if (now.getTime() - failingSince.getTime() >= this.options.disableAfterMs) {
      return {
        attempt,
        next: { state: 'failed' },
        after: async () => {
          if (await this.options.health.disable(endpoint, 'failing', now, log))
            log.warn({ failingSince }, 'endpoint disabled: failing');
        },
      };
    }
    if (delay === null) {
      return {
        attempt,
        next: { state: 'failed' },
        after: () => {
          log.warn(
            { statusCode: attempt.statusCode, error: attempt.error, attempts: doc.attemptCount + 1 },
            'webhook failed',
          );
          return Promise.resolve();
        },
      };
    }
    return {
      attempt,
      next: { state: 'pending', dueAt: new Date(now.getTime() + delay) },
      after: () => {
        log.info(
          { statusCode: attempt.statusCode, error: attempt.error, delayMs: delay },
          'webhook attempt failed, retrying',
        );
        return Promise.resolve();
      },
    };
  }

  /**
   * Writes the attempt's outcome under the delivery's lease, then what follows it. An outcome the store did not take
   * (the lease was taken over after it ran out, or another notifier stored the delivery) is logged and counted: the
   * attempt is not in the delivery log. What follows still runs: the receiver did answer.
   */
  async record(doc: DeliveryDoc, outcome: Outcome, log: Logger): Promise<void> {
    if (!(await this.options.store.recordAttempt(doc, outcome.attempt, outcome.next))) {
      log.warn(
        { statusCode: outcome.attempt.statusCode, error: outcome.attempt.error, next: outcome.next.state },
        'attempt outcome not recorded: the delivery is no longer leased to this worker',
      );
      this.options.onOutcomeNotRecorded?.();
    }
    await outcome.after();
  }
}
