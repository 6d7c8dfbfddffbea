import type { WebhookEndpointDoc } from '@vigil/proto';
import type { Logger } from 'pino';
import { nextDelayMs, parseRetryAfter } from '../domain/retry-policy';
import { backoffMs } from '../platform/retry';
import type { DeliveryAttempt, DeliveryDoc, DeliveryStore } from '../store/delivery-store';
import type { HttpSender, SendResult } from './http-sender';
import { buildBody } from './payload';
import { signatureHeaders } from './sign';

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

export interface SchedulerOptions {
  store: DeliveryStore;
  sender: HttpSender;
  log: Logger;
  retryScheduleS: readonly number[];
  retryAfterMaxMs: number;
  disableAfterMs: number;
  concurrency: number;
  perEndpointConcurrency: number;
  pollMs: number;
  /** How long a claimed delivery stays ours: the HTTP timeout plus a margin for the database writes. */
  leaseMs: number;
  projectionWaitMs: number;
  onAttempt?: (result: AttemptResult, durationMs: number) => void;
}

const USER_AGENT = 'Vigil-Webhooks/1';
/** How soon a delivery waiting for its projection is looked at again. */
const PROJECTION_RECHECK_MS = 200;
/** Deliveries claimed per database write. */
const CLAIM_BATCH = 32;
const RECLAIM_EVERY_MS = 5000;
/** Lease documents are pruned this often, once they are this old (a claim uses its lease key within milliseconds). */
const PRUNE_EVERY_MS = 10 * 60 * 1000;
const LEASE_KEEP_MS = 60 * 60 * 1000;

/**
 * Works the `deliveries` collection: claims due deliveries with a lease, sends them, records each attempt, and
 * reschedules failures by the retry schedule. Retries wait in the database, never in a Kafka partition. Several
 * notifier processes can run it at once: each attempt is claimed by a unique-key insert, and a crashed worker's lease
 * expires and is taken over.
 */
export class DeliveryScheduler {
  private running = false;
  private loop?: Promise<void>;
  private wakeUp?: () => void;
  private woken = false;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly perEndpoint = new Map<string, number>();
  private lastReclaim = 0;
  private lastPrune = 0;
  /** Slots promised to deliveries the consumer is inserting (see reserve). */
  private reserved = 0;

  constructor(private readonly options: SchedulerOptions) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** New or re-opened deliveries exist: look now. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  get leaseMs(): number {
    return this.options.leaseMs;
  }

  /**
   * Promises a slot to a delivery about to be inserted already leased to this worker, so its first attempt costs no
   * claim write (updates are the expensive part on FerretDB). Then `adopt` it once inserted, or `release` the slot.
   */
  reserve(endpointId: string): boolean {
    if (!this.running) return false;
    if (this.inFlight.size + this.reserved >= this.options.concurrency) return false;
    const load = this.perEndpoint.get(endpointId) ?? 0;
    if (load >= this.options.perEndpointConcurrency) return false;
    this.perEndpoint.set(endpointId, load + 1);
    this.reserved += 1;
    return true;
  }

  adopt(doc: DeliveryDoc): void {
    this.reserved -= 1;
    this.track(doc, { reserved: true });
  }

  release(endpointId: string): void {
    this.reserved -= 1;
    this.unload(endpointId);
  }

  /** Stops claiming and waits for the attempts in flight to be recorded. */
  async stop(): Promise<void> {
    this.running = false;
    this.wakeUp?.();
    await this.loop;
    await Promise.allSettled([...this.inFlight]);
  }

  private async run(): Promise<void> {
    const { log, pollMs } = this.options;
    let failures = 0;
    while (this.running) {
      this.woken = false;
      try {
        await this.fill();
        await this.prune();
        failures = 0;
      } catch (err) {
        failures += 1;
        log.warn({ err, failures }, 'delivery claim failed');
      }
      if (!this.running) break;
      if (this.woken && failures === 0) continue;
      // After failures the wait grows from twice the poll interval up to 5 s (with jitter); `wake()` still cuts it short.
      const delay = failures > 0 ? backoffMs({ initialMs: pollMs * 2, maxMs: 5000 }, failures) : pollMs;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = undefined;
    }
  }

  private async prune(): Promise<void> {
    const now = Date.now();
    if (now - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    const before = new Date(now - Math.max(LEASE_KEEP_MS, this.options.leaseMs * 10));
    const deleted = await this.options.store.pruneLeases(before);
    this.options.log.debug({ deleted }, 'delivery leases pruned');
  }

  /** Claims until every slot is busy or nothing is due. */
  private async fill(): Promise<void> {
    const { store, concurrency, perEndpointConcurrency, leaseMs } = this.options;
    while (this.running && this.inFlight.size + this.reserved < concurrency) {
      const now = new Date();
      // Expired leases are rare (a crashed worker); looking for them once per lease margin is enough.
      const reclaim = now.getTime() - this.lastReclaim >= Math.min(leaseMs, RECLAIM_EVERY_MS);
      if (reclaim) this.lastReclaim = now.getTime();
      const load = (endpointId: string) => this.perEndpoint.get(endpointId) ?? 0;
      const docs = await store.claim({
        now,
        leaseMs,
        limit: Math.min(concurrency - this.inFlight.size - this.reserved, CLAIM_BATCH),
        capacity: (endpointId) => perEndpointConcurrency - load(endpointId),
        skipEndpoints: [...this.perEndpoint].filter(([, n]) => n >= perEndpointConcurrency).map(([id]) => id),
        reclaim,
      });
      if (docs.length === 0) return;
      for (const doc of docs) this.track(doc);
    }
  }

  private track(doc: DeliveryDoc, { reserved = false } = {}): void {
    if (!reserved) this.perEndpoint.set(doc.endpointId, (this.perEndpoint.get(doc.endpointId) ?? 0) + 1);
    const task = this.process(doc)
      .catch((err: unknown) => {
        // The lease expires and another pass retries it; nothing is lost.
        this.options.log.error({ err, deliveryId: doc._id }, 'delivery processing failed');
      })
      .finally(() => {
        this.inFlight.delete(task);
        this.unload(doc.endpointId);
        this.wake();
      });
    this.inFlight.add(task);
  }

  private unload(endpointId: string): void {
    const left = (this.perEndpoint.get(endpointId) ?? 1) - 1;
    if (left <= 0) this.perEndpoint.delete(endpointId);
    else this.perEndpoint.set(endpointId, left);
  }

  private async process(doc: DeliveryDoc): Promise<void> {
    const { store } = this.options;
    const log = this.options.log.child({ deliveryId: doc._id, endpointId: doc.endpointId, webhookId: doc.webhookId });
    const endpoint = await store.endpoints.findOne({ _id: doc.endpointId });
    if (!endpoint) {
      await store.abandon(doc, 'endpoint_deleted');
      log.info('delivery abandoned: endpoint deleted');
      return;
    }
    const state = await store.endpointStates.findOne({ _id: endpoint._id });
    if (!endpoint.enabled || state?.disabledAt) {
      await store.abandon(doc, 'endpoint_disabled');
      log.info('delivery abandoned: endpoint disabled');
      return;
    }

    let body = doc.body;
    if (body === undefined) {
      const built = await buildBody(store, doc.trigger, {
        mayWait: Date.now() - doc.createdAt.getTime() < this.options.projectionWaitMs,
      });
      if (built.kind === 'wait') {
        await store.defer(doc, new Date(Date.now() + PROJECTION_RECHECK_MS));
        return;
      }
      if (built.kind === 'unavailable') {
        await this.failed(doc, endpoint, { at: new Date(), error: 'payload_unavailable', durationMs: 0 }, log);
        return;
      }
      if (!(await store.setBody(doc, built.body))) return;
      body = built.body;
    }

    const now = new Date();
    const secrets = endpoint.secrets
      .filter((s) => !s.expiresAt || s.expiresAt.getTime() > now.getTime())
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
      .map((s) => s.secret);
    if (secrets.length === 0) {
      await this.failed(doc, endpoint, { at: now, error: 'no_active_secret', durationMs: 0 }, log);
      return;
    }
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json',
      'user-agent': USER_AGENT,
      ...signatureHeaders({ webhookId: doc.webhookId, timestamp: Math.floor(now.getTime() / 1000), body, secrets }),
    };
    const result = await this.options.sender.send(endpoint.url, headers, body);
    const attempt: DeliveryAttempt = {
      at: now,
      durationMs: result.durationMs,
      ...(result.statusCode !== undefined ? { statusCode: result.statusCode } : {}),
      ...(result.error !== undefined ? { error: result.error } : {}),
      ...(result.responseBody !== undefined ? { responseBody: result.responseBody } : {}),
    };
    const code = result.statusCode;
    if (code !== undefined && code >= 200 && code < 300) {
      this.options.onAttempt?.('success', result.durationMs);
      await store.recordAttempt(doc, attempt, { state: 'succeeded' });
      await store.endpointSucceeded(endpoint, state, new Date());
      log.info({ statusCode: code, durationMs: result.durationMs }, 'webhook delivered');
      return;
    }
    if (code === 410) {
      this.options.onAttempt?.('gone', result.durationMs);
      await store.recordAttempt(doc, attempt, { state: 'failed' });
      await store.disableEndpoint(endpoint, 'gone', new Date());
      log.warn('endpoint disabled: gone');
      return;
    }
    await this.failed(doc, endpoint, attempt, log, result);
  }

  /** Records a failed attempt and schedules the next one, or gives up after the last. */
  private async failed(
    doc: DeliveryDoc,
    endpoint: WebhookEndpointDoc,
    attempt: DeliveryAttempt,
    log: Logger,
    result?: SendResult,
  ): Promise<void> {
    const { store } = this.options;
    const label: AttemptResult = (attempt.error as AttemptResult | undefined) ?? 'http_error';
    this.options.onAttempt?.(label, attempt.durationMs);
    const now = new Date();
    const delay = nextDelayMs({
      attempts: doc.cycleAttempts + 1,
      scheduleS: this.options.retryScheduleS,
      retryAfterMs: parseRetryAfter(result?.retryAfter, now, this.options.retryAfterMaxMs),
    });
    const failingSince = await store.endpointFailed(endpoint, now);
    if (now.getTime() - failingSince.getTime() >= this.options.disableAfterMs) {
      await store.recordAttempt(doc, attempt, { state: 'failed' });
      await store.disableEndpoint(endpoint, 'failing', now);
      log.warn({ failingSince }, 'endpoint disabled: failing');
      return;
    }
    if (delay === null) {
      await store.recordAttempt(doc, attempt, { state: 'failed' });
      log.warn(
        { statusCode: attempt.statusCode, error: attempt.error, attempts: doc.attemptCount + 1 },
        'webhook failed',
      );
      return;
    }
    await store.recordAttempt(doc, attempt, { state: 'pending', dueAt: new Date(now.getTime() + delay) });
    log.info(
      { statusCode: attempt.statusCode, error: attempt.error, delayMs: delay },
      'webhook attempt failed, retrying',
    );
  }
}
