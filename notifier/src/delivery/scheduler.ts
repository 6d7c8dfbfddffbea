import type { EndpointStateDoc, WebhookEndpointDoc } from '@vigil/proto';
import type { BackoffPolicy } from '@vigil/proto/platform';
import type { Logger } from 'pino';
import { WorkLoop } from '../queue/work-loop';
import { withFirstOutcome, type DeliveryDoc, type DeliveryStore } from '../store/delivery-store';
import { attemptFits } from '../queue/due-jobs';
import type { FirstAttempt, FirstAttemptFate, LeaseHolder } from './delivery-intake';
import type { EndpointStateStore } from '../store/endpoint-states';
import type { UpstreamReads } from '../store/upstream-reads';
import { AttemptOutcomes, answerKind, type AttemptResult, type Outcome } from './attempt-outcomes';
import { EndpointBreakers } from './endpoint-breakers';
import { EndpointHealth } from './endpoint-health';
import type { EndpointCache } from './endpoint-cache';
import type { HttpSender } from './http-sender';
import { buildBody } from './payload';
import { signatureHeaders } from './sign';

export type { AttemptResult } from './attempt-outcomes';

export interface SchedulerOptions {
  store: DeliveryStore;
  endpointStates: EndpointStateStore;
  /** The projections webhook bodies are built from. */
  reads: UpstreamReads;
  endpoints: EndpointCache;
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
  /** The longest an attempt takes: the HTTP timeout the sender applies, milliseconds. */
  attemptMs: number;
  projectionWaitMs: number;
  /**
   * An attempt answered after this long marks its endpoint slow, one answered sooner clears it (see `isSlow`),
   * milliseconds: the first attempt's wait (DeliveryIntake). Absent, no endpoint is slow.
   */
  slowAttemptMs?: number;
  /** How far ahead an open breaker's backlog is parked (see EndpointBreakers), milliseconds. Default an hour. */
  backlogParkMs?: number;
  onAttempt?: (result: AttemptResult, durationMs: number) => void;
  /** An attempt's outcome was not written: the delivery was no longer leased to this worker (see `record`). */
  onOutcomeNotRecorded?: () => void;
  /** Tries of an endpoint health write that follows a recorded outcome, and the delays between them. */
  healthWrites?: { attempts: number; backoff: BackoffPolicy };
  /** An endpoint health write failed every try (see EndpointHealth). */
  onHealthWriteFailed?: () => void;
}

const USER_AGENT = 'Vigil-Webhooks/1';

/** An endpoint and the body to send it, once nothing stops the attempt. */
interface Ready {
  endpoint: WebhookEndpointDoc;
  state: EndpointStateDoc | null;
  body: string;
}

/** How soon a delivery waiting for its projection is looked at again. */
const PROJECTION_RECHECK_MS = 200;
/** Deliveries claimed per database write. */
const CLAIM_BATCH = 32;

/**
 * Works the `deliveries` collection: claims due deliveries with a lease, sends them, records each attempt, and
 * reschedules failures by the retry schedule. Retries wait in the database, never in a Kafka partition. Several
 * notifier processes can run it at once: each attempt is claimed by a unique-key insert, and a crashed worker's lease
 * expires and is taken over.
 */
export class DeliveryScheduler implements LeaseHolder {
  private readonly loop: WorkLoop<DeliveryDoc>;
  /** What follows each attempt: its record, its retry, its endpoint's health. */
  private readonly outcomes: AttemptOutcomes;
  private readonly perEndpoint = new Map<string, number>();
  private readonly breakers: EndpointBreakers;
  /** Endpoints whose last attempt took longer than `slowAttemptMs` (or missed the first attempt's wait, still out). */
  private readonly slow = new Set<string>();
  /** First attempts whose delivery is not stored yet (see `sendFirst`): a stop drops them. */
  private readonly undecided = new Set<(fate: FirstAttemptFate) => void>();
  /** What follows first attempts handed to the outcome writer, once it wrote them (see `sendFirst`). */
  private readonly followUps = new Set<Promise<void>>();

  constructor(private readonly options: SchedulerOptions) {
    this.breakers = new EndpointBreakers(options.backlogParkMs);
    this.outcomes = new AttemptOutcomes({
      store: options.store,
      health: new EndpointHealth({
        states: options.endpointStates,
        endpoints: options.endpoints,
        writes: options.healthWrites,
        onWriteFailed: options.onHealthWriteFailed,
      }),
      retryScheduleS: options.retryScheduleS,
      retryAfterMaxMs: options.retryAfterMaxMs,
      disableAfterMs: options.disableAfterMs,
      onAttempt: options.onAttempt,
      onOutcomeNotRecorded: options.onOutcomeNotRecorded,
    });
    this.loop = new WorkLoop({
      log: options.log,
      pollMs: options.pollMs,
      concurrency: options.concurrency,
      claimBatch: CLAIM_BATCH,
      claim: (now, limit) => this.claim(now, limit),
      process: (doc) => {
        // The endpoint's slot bounds requests in flight to its receiver: it is given back once the attempt is answered
        // (and the breaker has heard of it), not after the outcome is written, so a slow store write does not hold
        // the receiver's capacity. The worker's own slot stays taken until the outcome is recorded.
        let held = true;
        const endpointDone = () => {
          if (!held) return;
          held = false;
          this.unload(doc.endpointId);
        };
        return this.process(doc, endpointDone).finally(endpointDone);
      },
      leases: { leaseMs: options.leaseMs, prune: (before) => this.prune(before) },
    });
  }

  start(): void {
    this.loop.start();
  }

  /** New or re-opened deliveries exist: look now. */
  wake(): void {
    this.loop.wake();
  }

  /**
   * Slots taken in this process: `workers`, deliveries being worked until their outcome is written (of
   * `concurrency`); `endpoints`, endpoint slots, requests in flight to receivers or about to be sent.
   */
  get slots(): { workers: number; endpoints: number } {
    let endpoints = 0;
    for (const load of this.perEndpoint.values()) endpoints += load;
    return { workers: this.loop.busy, endpoints };
  }

  get leaseMs(): number {
    return this.options.leaseMs;
  }

  get attemptMs(): number {
    return this.options.attemptMs;
  }

  /**
   * Promises a slot to a delivery about to be inserted already leased to this worker (`DeliveryIntake`).
   * Then `adopt` it once inserted, or `release` the slot.
   */
  reserve(endpointId: string): boolean {
    const load = this.load(endpointId);
    if (this.capacity(endpointId, Date.now()) <= 0 || !this.loop.reserve()) return false;
    this.perEndpoint.set(endpointId, load + 1);
    return true;
  }

  adopt(doc: DeliveryDoc): void {
    this.loop.adopt(doc);
  }

  release(endpointId: string): void {
    this.loop.release();
    this.unload(endpointId);
  }

  /**
   * The first attempt of a delivery that is not stored yet, in the slot `reserve` promised: it is sent at once, and
   * `answered` gives the delivery as it is to be stored with the outcome (or undefined when it cannot be sent from
   * what it carries: its endpoint is gone or disabled, or has no secret). The caller then says what became of it
   * (`decide`): stored with its outcome, stored leased before the answer (the outcome is then written under the
   * lease, or the usual path records why it was not sent), found stored already, or not stored (`dropped`). Until
   * then the worker's slot and the endpoint's stay taken. With write-behind, `stored` is said as the delivery is
   * handed to the outcome writer (OutcomeWriter), so a window of gathered inserts holds no slot: a busy endpoint's
   * slots turn over at the pace of its answers, and the writer's bound limits what is sent and not stored yet.
   */
  sendFirst(doc: DeliveryDoc): FirstAttempt {
    let answer!: (stored: DeliveryDoc | undefined) => void;
    const answered = new Promise<DeliveryDoc | undefined>((resolve) => (answer = resolve));
    let decide!: (fate: FirstAttemptFate, written?: Promise<void>) => void;
    const decided = new Promise<{ fate: FirstAttemptFate; written?: Promise<void> }>(
      (resolve) => (decide = (fate, written) => resolve({ fate, written })),
    );
    this.undecided.add(decide);
    let held = true;
    const endpointDone = () => {
      if (!held) return;
      held = false;
      this.unload(doc.endpointId);
    };
    const log = this.logOf(doc);
    this.loop.adoptTask(doc._id, async () => {
      let outcome: Outcome | undefined;
      try {
        const ready = await this.ready(doc, log, { write: false });
        // The endpoint's slot is held until the delivery is stored (or handed to the outcome writer, whose bound
        // then limits the webhooks sent and not stored), not given back at the answer: a notifier that dies leaves at
        // most those of webhooks sent and not stored, which the event read again sends again.
        outcome = ready ? await this.attempt(doc, ready, () => {}, log) : undefined;
      } catch (err) {
        // The endpoint or its health could not be read: the delivery goes in leased, and the usual path tries again.
        log.warn({ err }, 'first attempt not made');
      }
      answer(outcome && withFirstOutcome(doc, outcome.attempt, outcome.next));
      const { fate, written } = await decided;
      this.undecided.delete(decide);
      if (fate === 'stored' || fate === 'existed') {
        endpointDone();
        if (!outcome) return;
        if (written) {
          // Handed to the outcome writer: the endpoint's health and the log line follow its insert, and the worker's
          // slot is free now. A delivery the writer gave up on (a stop) is sent again after the restart.
          const made = outcome;
          const followUp = written
            .then(
              () => made.after(),
              () => undefined,
            )
            .catch((err: unknown) => {
              log.warn({ err }, 'what follows a first attempt not recorded');
            })
            .finally(() => this.followUps.delete(followUp));
          this.followUps.add(followUp);
          return;
        }
        // Found stored after an insert that went in leased: the lease may be this one's, run out since an earlier
        // try's insert whose reply was lost (one still running comes as `leased`). The write is conditioned on it, so
        // it changes another notifier's delivery, or one taken over since, in no way.
        if (fate === 'existed' && doc.leaseId) await this.outcomes.record(doc, outcome, log);
        else await outcome.after();
      } else if (fate === 'leased') {
        if (!outcome) {
          // Found stored under this process's lease after an earlier try's lost reply, the lease may have less than an
          // attempt's time left: an attempt could outlast it, and another notifier send the delivery again. It is
          // left to be taken over once the lease ran out, late but sent once.
          if (doc.leaseUntil && !attemptFits(doc.leaseUntil.getTime(), this.options.attemptMs, Date.now())) {
            return endpointDone();
          }
          return this.process(doc, endpointDone);
        }
        endpointDone();
        await this.outcomes.record(doc, outcome, log);
      } else endpointDone();
    });
    return {
      answered,
      decide: (fate, written) => {
        this.undecided.delete(decide);
        decide(fate, written);
      },
    };
  }

  isSlow(endpointId: string): boolean {
    return this.slow.has(endpointId);
  }

  markSlow(endpointId: string): void {
    this.slow.add(endpointId);
  }

  /**
   * Stops claiming and waits for the attempts in flight to be recorded (first attempts not stored are dropped), and
   * for what follows those the outcome writer wrote (stop the writer first: see DeliveryModule's drain).
   */
  async stop(): Promise<void> {
    for (const decide of [...this.undecided]) decide('dropped');
    this.undecided.clear();
    await this.loop.stop();
    await Promise.all([...this.followUps]);
  }

  /**
   * Due deliveries for `limit` free slots, fairly between tenants and endpoints, within each endpoint's free capacity
   * (none while its breaker is open); each takes a slot of its endpoint.
   */
  private async claim(now: Date, limit: number): Promise<DeliveryDoc[]> {
    const docs = await this.options.store.claim(
      now,
      this.options.leaseMs,
      limit,
      (endpointId) => this.capacity(endpointId, now.getTime()),
      (endpointId) => this.breakers.pause(endpointId, now.getTime()),
    );
    for (const doc of docs) this.perEndpoint.set(doc.endpointId, this.load(doc.endpointId) + 1);
    return docs;
  }

  private load(endpointId: string): number {
    return this.perEndpoint.get(endpointId) ?? 0;
  }

  private capacity(endpointId: string, now: number): number {
    const allowed = this.breakers.allowed(endpointId, now, this.options.perEndpointConcurrency);
    return Math.max(0, allowed - this.load(endpointId));
  }

  private async prune(before: Date): Promise<void> {
    const deleted = await this.options.store.pruneLeases(before);
    this.options.log.debug({ deleted }, 'delivery leases pruned');
  }

  private unload(endpointId: string): void {
    const left = (this.perEndpoint.get(endpointId) ?? 1) - 1;
    if (left <= 0) this.perEndpoint.delete(endpointId);
    else this.perEndpoint.set(endpointId, left);
  }

  private logOf(doc: DeliveryDoc): Logger {
    return this.options.log.child({ deliveryId: doc._id, endpointId: doc.endpointId, webhookId: doc.webhookId });
  }

  private async process(doc: DeliveryDoc, endpointDone: () => void): Promise<void> {
    const log = this.logOf(doc);
    const ready = await this.ready(doc, log, { write: true });
    if (!ready) return;
    const outcome = await this.attempt(doc, ready, endpointDone, log);
    await this.outcomes.record(doc, outcome, log);
  }

  /**
   * The endpoint and body of an attempt, or undefined when there is nothing to send now. With `write`, that case is
   * recorded here (abandoned, deferred, failed without a call); without it (a first attempt whose delivery is not
   * stored yet), nothing is written and the caller takes the usual path.
   */
  private async ready(doc: DeliveryDoc, log: Logger, { write }: { write: boolean }): Promise<Ready | undefined> {
    const { store } = this.options;
    const view = await this.options.endpoints.get(doc.tenantId, doc.endpointId);
    if (!view) {
      if (!write) return undefined;
      await store.abandon(doc, 'endpoint_deleted');
      log.info('delivery abandoned: endpoint deleted');
      return undefined;
    }
    const { endpoint, state } = view;
    if (!endpoint.enabled || state?.disabledAt) {
      if (!write) return undefined;
      await store.abandon(doc, 'endpoint_disabled');
      log.info('delivery abandoned: endpoint disabled');
      return undefined;
    }

    let body = doc.body;
    if (body === undefined) {
      if (!write) return undefined;
      const built = await buildBody(this.options.reads, doc.trigger, {
        mayWait: Date.now() - doc.createdAt.getTime() < this.options.projectionWaitMs,
      });
      if (built.kind === 'wait') {
        await store.defer(doc, new Date(Date.now() + PROJECTION_RECHECK_MS));
        return undefined;
      }
      if (built.kind === 'unavailable') {
        await this.failedWithoutCall(doc, endpoint, 'payload_unavailable', log);
        return undefined;
      }
      if (!(await store.setBody(doc, built.body))) return undefined;
      body = built.body;
    }
    if (activeSecrets(endpoint, Date.now()).length === 0) {
      if (write) await this.failedWithoutCall(doc, endpoint, 'no_active_secret', log);
      return undefined;
    }
    return { endpoint, state, body };
  }

  private async failedWithoutCall(
    doc: DeliveryDoc,
    endpoint: WebhookEndpointDoc,
    error: 'payload_unavailable' | 'no_active_secret',
    log: Logger,
  ): Promise<void> {
    const outcome = await this.outcomes.failed(doc, endpoint, { at: new Date(), error, durationMs: 0 }, log);
    await this.outcomes.record(doc, outcome, log);
  }

  /** Sends the delivery and decides what came of it (AttemptOutcomes); writes nothing to the delivery. */
  private async attempt(doc: DeliveryDoc, ready: Ready, endpointDone: () => void, log: Logger): Promise<Outcome> {
    const { endpoint, state, body } = ready;
    const now = new Date();
    const secrets = activeSecrets(endpoint, now.getTime());
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json',
      'user-agent': USER_AGENT,
      ...signatureHeaders({ webhookId: doc.webhookId, timestamp: Math.floor(now.getTime() / 1000), body, secrets }),
    };
    const result = await this.options.sender.send(endpoint.url, headers, body);
    if (result.durationMs > (this.options.slowAttemptMs ?? Infinity)) this.slow.add(endpoint._id);
    else this.slow.delete(endpoint._id);
    const kind = answerKind(result.statusCode);
    // The breaker hears of the attempt, then the endpoint's slot goes back (a 410 disables the endpoint instead).
    if (kind === 'success') {
      // Its backlog comes back now, not at the bucket it was parked in (this process's breaker or another's parked it).
      if (this.breakers.succeeded(endpoint._id) || doc.parked) this.options.store.unpark(endpoint._id);
    } else if (kind === 'failure') this.breakers.failed(endpoint._id, Date.now());
    endpointDone();
    return this.outcomes.answered(doc, endpoint, state, now, result, log);
  }
}

/** The endpoint's secrets that have not expired, newest first: each signs the request. */
function activeSecrets(endpoint: WebhookEndpointDoc, now: number): string[] {
  return endpoint.secrets
    .filter((s) => !s.expiresAt || s.expiresAt.getTime() > now)
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
    .map((s) => s.secret);
}
