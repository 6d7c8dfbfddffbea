import { COLLECTIONS, type WebhookEventName } from '@vigil/proto';
import type { Collection, Db } from 'mongodb';
import type { WebhookTrigger } from '../domain/webhook-events';
import { DueQueue } from './due-queue';
import type { DueQueueTiming, Pause } from './queued-doc';
import { storableText } from './storable-text';

type DeliveryState = 'pending' | 'sending' | 'succeeded' | 'failed';

/** One HTTP attempt, as shown in the delivery log. */
export interface DeliveryAttempt {
  at: Date;
  statusCode?: number;
  /**
   * `timeout`, `network_error`, `ssrf_refused`, `invalid_url`, `payload_unavailable`, `no_active_secret`; `interrupted`:
   * the notifier making it stopped before it recorded an outcome (the receiver may have had the request or not).
   */
  error?: string;
  durationMs: number;
  /** First KiB of the response body. */
  responseBody?: string;
}

/**
 * Collection `deliveries`, written by the notifier only: one document per (webhook event, endpoint). `_id` is derived
 * from (event id, endpoint id), so re-consuming an event inserts nothing new.
 */
export interface DeliveryDoc {
  _id: string;
  tenantId: string;
  endpointId: string;
  /** `webhook-id` header: the same for every attempt and every endpoint of this webhook event. */
  webhookId: string;
  /** The domain event that caused it. */
  eventId: string;
  event: WebhookEventName;
  /** The body's `id` (moderation id or user action id). */
  subjectId: string;
  trigger: WebhookTrigger;
  /** Built at the first attempt (once the projections caught up), then sent byte for byte on every retry. */
  body?: string;
  state: DeliveryState;
  /** Attempts made in total, and since the last manual retry or replay (the retry schedule counts these). */
  attemptCount: number;
  cycleAttempts: number;
  attempts: DeliveryAttempt[];
  /** When the next attempt is due (state `pending`). */
  dueAt: Date;
  /** The time bucket the due queue reads it in (see DueQueue). */
  due?: string;
  /** A worker holds the delivery until then (state `sending`); an expired lease is taken over. */
  leaseUntil?: Date;
  leaseId?: string;
  /** Set on a claimed delivery taken over from a notifier that stopped mid-attempt (see QueuedDoc); never stored. */
  interruptedAt?: Date;
  /** Parked while its endpoint is down (see QueuedDoc); set on a claimed delivery as it was before the claim. */
  parked?: true;
  lastAttemptAt?: Date;
  lastStatusCode?: number;
  lastError?: string;
  completedAt?: Date;
  createdAt: Date;
  updatedAt: Date;
}

/** A new delivery of a webhook event to one endpoint, due at `now`; its body may be built already. */
export function newDelivery(
  fields: Pick<
    DeliveryDoc,
    '_id' | 'tenantId' | 'endpointId' | 'webhookId' | 'eventId' | 'event' | 'subjectId' | 'trigger' | 'body'
  >,
  now: Date,
): DeliveryDoc {
  return {
    ...fields,
    state: 'pending',
    attemptCount: 0,
    cycleAttempts: 0,
    attempts: [],
    dueAt: now,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * The notifier's `deliveries` (endpoint health is in EndpointStateStore, reads of other services' collections in
 * UpstreamReads). Deliveries wait in a DueQueue (time buckets, lease keys); the writes here that end an attempt are
 * conditioned on the lease (`leaseId`), so a worker whose lease was taken over records nothing.
 */
export class DeliveryStore {
  private readonly deliveries: Collection<DeliveryDoc>;
  private readonly queue: DueQueue<DeliveryDoc>;

  constructor(db: Db, timing: DueQueueTiming) {
    this.deliveries = db.collection(COLLECTIONS.deliveries);
    // Handed out fairly between endpoints: one endpoint's backlog never holds another's deliveries.
    this.queue = DueQueue.in(db, this.deliveries, COLLECTIONS.deliveryLeases, timing, {
      of: (doc) => (doc as DeliveryDoc).endpointId,
      field: 'endpointId',
    });
  }

  async ensureIndexes(): Promise<void> {
    await this.queue.ensureIndexes();
    await this.deliveries.createIndex({ endpointId: 1, createdAt: -1 }, { name: 'endpoint_log' });
    await this.deliveries.createIndex({ tenantId: 1, createdAt: -1 }, { name: 'tenant_log' });
  }

  /** Bucket reads made by the due queue (tests, metrics). */
  get dueReads(): number {
    return this.queue.reads;
  }

  /**
   * Inserts the deliveries that do not exist yet (one unordered insertMany); returns the ids that were new. Those named
   * in `leased` go in already leased until `leased.until` (`sending`, in the bucket of the lease's end), their lease
   * fields set on the documents given; the rest wait in the due queue. A crash leaves the leased ones to be swept and
   * taken over after their lease, like any lease.
   *
   * A document given again (a batch tried again after its insert failed) keeps the lease id it was given: an earlier
   * try's insert may have landed with it, its reply lost. Found stored under that lease, still running, it counts as
   * new (see DueQueue.insertMany): the caller works it, and writes the outcome, under that lease.
   */
  async insertNew(docs: DeliveryDoc[], leased?: { ids: ReadonlySet<string>; until: Date }): Promise<Set<string>> {
    if (leased) {
      for (const doc of docs) {
        if (!leased.ids.has(doc._id)) continue;
        const fields = this.queue.leaseFields(leased.until);
        Object.assign(doc, fields, { leaseId: doc.leaseId ?? fields.leaseId });
      }
    }
    return this.queue.insertMany(docs);
  }

  /** Due deliveries (and expired leases) for this worker, fairly between tenants and endpoints. */
  claim(
    now: Date,
    leaseMs: number,
    limit: number,
    capacity: (endpointId: string) => number,
    pauseOf?: (endpointId: string) => Pause | undefined,
  ): Promise<DeliveryDoc[]> {
    return this.queue.claim(now, leaseMs, limit, capacity, pauseOf);
  }

  /** Brings the endpoint's parked deliveries back at the next claim: it answered. */
  unpark(endpointId: string): void {
    this.queue.unpark(endpointId);
  }

  byId(deliveryId: string): Promise<DeliveryDoc | null> {
    return this.deliveries.findOne({ _id: deliveryId });
  }

  /** Stores the body built for the first attempt; false if the lease was lost. */
  async setBody(doc: DeliveryDoc, body: string): Promise<boolean> {
    const result = await this.deliveries.updateOne({ _id: doc._id, leaseId: doc.leaseId }, { $set: { body } });
    return result.matchedCount === 1;
  }

  /** Back to pending without an attempt (the payload's projection has not caught up yet). */
  async defer(doc: DeliveryDoc, dueAt: Date): Promise<void> {
    await this.queue.finish(doc, { state: 'pending', dueAt });
  }

  /**
   * Records an attempt (its text as the store can hold it) and the outcome: `pending` again at `dueAt`, or final. False
   * when nothing was recorded: the delivery is no longer under the lease `doc` names (taken over, or stored by another).
   */
  async recordAttempt(
    doc: DeliveryDoc,
    made: DeliveryAttempt,
    next: { state: 'pending'; dueAt: Date } | { state: 'succeeded' | 'failed' },
  ): Promise<boolean> {
    const attempt = storableAttempt(made);
    const { lastError, ...fields } = outcomeFields(attempt, next, new Date());
    // An attempt cut short by a notifier that stopped (its lease ran out) is in the log too, in the same write.
    const attempts: DeliveryAttempt[] = doc.interruptedAt
      ? [{ at: doc.interruptedAt, error: 'interrupted', durationMs: 0 }, attempt]
      : [attempt];
    return this.queue.finish(doc, next, {
      $push: { attempts: attempts.length === 1 ? attempt : { $each: attempts } },
      $inc: { attemptCount: attempts.length, cycleAttempts: attempts.length },
      $set: { ...fields, ...(lastError !== undefined ? { lastError } : {}) },
      ...(lastError === undefined ? { $unset: { lastError: '' } } : {}),
    });
  }

  /** Ends a delivery without an attempt (its endpoint is gone or disabled). */
  async abandon(doc: DeliveryDoc, reason: string): Promise<void> {
    await this.queue.finish(doc, { state: 'failed' }, { $set: { lastError: reason, completedAt: new Date() } });
  }

  /** A manual retry: due now with a fresh schedule. Not while a worker holds it. */
  async retry(tenantId: string, deliveryId: string, now: Date): Promise<boolean> {
    const scheduling = this.queue.pendingFields(now);
    const result = await this.deliveries.updateOne(
      { _id: deliveryId, tenantId, state: { $in: ['failed', 'succeeded', 'pending'] } },
      { $set: { ...scheduling, cycleAttempts: 0, updatedAt: now }, $unset: { completedAt: '' } },
    );
    await this.queue.written(scheduling.due, { _id: deliveryId });
    return result.matchedCount === 1;
  }

  /** Failed deliveries of the endpoint created since `since`: due now with a fresh schedule. */
  async replay(tenantId: string, endpointId: string, since: Date, now: Date): Promise<number> {
    const scheduling = this.queue.pendingFields(now);
    const result = await this.deliveries.updateMany(
      { tenantId, endpointId, state: 'failed', createdAt: { $gte: since } },
      { $set: { ...scheduling, cycleAttempts: 0, updatedAt: now }, $unset: { completedAt: '' } },
    );
    await this.queue.written(scheduling.due, { endpointId });
    return result.modifiedCount;
  }

  /** Deliveries due now that this process knows of (held in memory; the store is not read). */
  countDue(now: Date): number {
    return this.queue.dueCount(now.getTime());
  }

  pruneLeases(before: Date): Promise<number> {
    return this.queue.pruneLeases(before);
  }
}

/**
 * A delivery not stored yet whose first attempt was made, as it is to be inserted with that attempt's outcome (one
 * insert instead of an insert and `recordAttempt`'s update): the same fields that update would set, on a new object.
 * A pending one gets its due queue bucket when inserted.
 */
export function withFirstOutcome(
  doc: DeliveryDoc,
  made: DeliveryAttempt,
  next: { state: 'pending'; dueAt: Date } | { state: 'succeeded' | 'failed' },
): DeliveryDoc {
  const now = new Date();
  const attempt = storableAttempt(made);
  const { lastError, ...fields } = outcomeFields(attempt, next, now);
  // Lease fields a claim may have put on the object since the attempt began are not the outcome's.
  const unleased: DeliveryDoc = { ...doc };
  delete unleased.leaseId;
  delete unleased.leaseUntil;
  delete unleased.due;
  return {
    ...unleased,
    state: next.state,
    ...(next.state === 'pending' ? { dueAt: next.dueAt } : {}),
    attempts: [...unleased.attempts, attempt],
    attemptCount: unleased.attemptCount + 1,
    cycleAttempts: unleased.cycleAttempts + 1,
    ...fields,
    ...(lastError !== undefined ? { lastError } : {}),
    updatedAt: now,
  };
}

/** The summary fields an attempt's outcome sets on its delivery (`lastError` undefined: to be cleared). */
function outcomeFields(
  attempt: DeliveryAttempt,
  next: { state: DeliveryState },
  now: Date,
): Pick<DeliveryDoc, 'completedAt' | 'lastAttemptAt' | 'lastStatusCode' | 'lastError'> {
  const lastError = next.state === 'succeeded' ? undefined : (attempt.error ?? `http_${attempt.statusCode ?? 0}`);
  return {
    ...(next.state === 'pending' ? {} : { completedAt: now }),
    lastAttemptAt: attempt.at,
    ...(attempt.statusCode !== undefined ? { lastStatusCode: attempt.statusCode } : {}),
    lastError,
  };
}

/**
 * The attempt as the store can hold it: its text fields without NUL characters. The response body is the receiver's
 * own bytes; a NUL in it would make the attempt unrecordable, and the delivery would be sent again at every lease.
 */
function storableAttempt(attempt: DeliveryAttempt): DeliveryAttempt {
  return {
    ...attempt,
    ...(attempt.error !== undefined ? { error: storableText(attempt.error) } : {}),
    ...(attempt.responseBody !== undefined ? { responseBody: storableText(attempt.responseBody) } : {}),
  };
}
