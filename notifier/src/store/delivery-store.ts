import {
  COLLECTIONS,
  type EndpointStateDoc,
  type RecordDoc,
  type UserDoc,
  type WebhookEndpointDoc,
  type WebhookEventName,
} from '@vigil/proto';
import { MongoBulkWriteError, type Collection, type Db, type OptionalUnlessRequiredId } from 'mongodb';
import type { WebhookTrigger } from '../domain/webhook-events';

export type DeliveryState = 'pending' | 'sending' | 'succeeded' | 'failed';

/** One HTTP attempt, as shown in the delivery log. */
export interface DeliveryAttempt {
  at: Date;
  statusCode?: number;
  /** `timeout`, `network_error`, `ssrf_refused`, `invalid_url`, `payload_unavailable`, `no_active_secret`. */
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
  /** A worker holds the delivery until then (state `sending`); an expired lease is taken over. */
  leaseUntil?: Date;
  leaseId?: string;
  lastAttemptAt?: Date;
  lastStatusCode?: number;
  lastError?: string;
  completedAt?: Date;
  createdAt: Date;
  updatedAt: Date;
}

/** One worker's claim on one attempt: `_id` is `<delivery id>@<due time in ms>#<take-over number>`. */
export interface DeliveryLeaseDoc {
  _id: string;
  deliveryId: string;
  leaseUntil: Date;
  createdAt: Date;
}

export class DeliveryStore {
  readonly deliveries: Collection<DeliveryDoc>;
  readonly leases: Collection<DeliveryLeaseDoc>;
  readonly endpoints: Collection<WebhookEndpointDoc>;
  readonly endpointStates: Collection<EndpointStateDoc>;
  readonly records: Collection<RecordDoc>;
  readonly users: Collection<UserDoc>;

  constructor(readonly db: Db) {
    this.deliveries = db.collection(COLLECTIONS.deliveries);
    this.leases = db.collection(COLLECTIONS.deliveryLeases);
    this.endpoints = db.collection(COLLECTIONS.webhookEndpoints);
    this.endpointStates = db.collection(COLLECTIONS.endpointStates);
    this.records = db.collection(COLLECTIONS.records);
    this.users = db.collection(COLLECTIONS.users);
  }

  async ensureIndexes(): Promise<void> {
    await this.deliveries.createIndex({ state: 1, dueAt: 1 }, { name: 'due' });
    await this.deliveries.createIndex({ endpointId: 1, createdAt: -1 }, { name: 'endpoint_log' });
    await this.deliveries.createIndex({ tenantId: 1, createdAt: -1 }, { name: 'tenant_log' });
    await this.leases.createIndex({ deliveryId: 1 }, { name: 'delivery' });
  }

  /**
   * Enabled endpoints of the tenant that the notifier has not disabled. Their states are read by `_id` one by one: a
   * tenant has a few endpoints (capped), and FerretDB answers an `$in` filter with a scan of the whole collection.
   */
  async activeEndpoints(tenantId: string): Promise<WebhookEndpointDoc[]> {
    const endpoints = await this.endpoints.find({ tenantId, enabled: true }).toArray();
    const states = await Promise.all(
      endpoints.map((endpoint) =>
        this.endpointStates.findOne({ _id: endpoint._id }, { projection: { disabledAt: 1 } }),
      ),
    );
    return endpoints.filter((_, index) => !states[index]?.disabledAt);
  }

  /** Inserts the deliveries that do not exist yet (one unordered insertMany); returns the ids that were new. */
  insertNew(docs: DeliveryDoc[]): Promise<Set<string>> {
    return insertIgnoringDuplicates(this.deliveries, docs);
  }

  /**
   * Takes due deliveries (and, with `reclaim`, ones whose worker's lease expired, e.g. after a crash) for this worker.
   * Exclusivity comes from unique `_id` inserts into `delivery_leases`, one key per (delivery, due time, take-over):
   * conditional updates are not atomic on FerretDB v1 (read, filter in Go, write by `_id`), so two workers whose
   * `updateMany({state: 'pending'})` raced would both send. Lease documents are kept (a stale candidate read before
   * the attempt was recorded finds its key taken) and removed by `pruneLeases` long after they matter.
   * `capacity` says how many more deliveries an endpoint may take; `limit` bounds the batch.
   */
  async claim(options: {
    now: Date;
    leaseMs: number;
    limit: number;
    capacity: (endpointId: string) => number;
    skipEndpoints: string[];
    reclaim: boolean;
  }): Promise<DeliveryDoc[]> {
    const { now, leaseMs, limit, capacity, skipEndpoints, reclaim } = options;
    const skip = new Set(skipEndpoints);
    // `state` is pushed down to an index; `dueAt` and `leaseUntil` are filtered after it (on MongoDB, by the index).
    const pending = await this.deliveries
      .find({ state: 'pending', dueAt: { $lte: now } })
      .sort({ dueAt: 1 })
      .limit(limit * 4)
      .toArray();
    const expired = reclaim
      ? await this.deliveries
          .find({ state: 'sending', leaseUntil: { $lte: now } })
          .limit(limit)
          .toArray()
      : [];
    const taken = new Map<string, number>();
    const chosen: DeliveryDoc[] = [];
    for (const candidate of [...pending, ...expired]) {
      if (chosen.length >= limit) break;
      if (skip.has(candidate.endpointId)) continue;
      const n = taken.get(candidate.endpointId) ?? 0;
      if (n >= capacity(candidate.endpointId)) continue;
      taken.set(candidate.endpointId, n + 1);
      chosen.push(candidate);
    }
    if (chosen.length === 0) return [];
    const leaseUntil = new Date(now.getTime() + leaseMs);
    const leaseOf = (doc: DeliveryDoc, takeover: number): DeliveryLeaseDoc => ({
      _id: `${doc._id}@${doc.dueAt.getTime()}#${takeover}`,
      deliveryId: doc._id,
      leaseUntil,
      createdAt: now,
    });
    const won = await this.insertNewLeases(chosen.map((doc) => leaseOf(doc, 0)));
    const claimed: { doc: DeliveryDoc; leaseId: string; verify: boolean }[] = [];
    for (const doc of chosen) {
      const first = leaseOf(doc, 0)._id;
      // A delivery in `sending` whose first key was free was leased at insert; check it is still that delivery.
      if (won.has(first)) claimed.push({ doc, leaseId: first, verify: doc.state === 'sending' });
      else if (reclaim) {
        const takeover = await this.takeOver(doc, now, (n) => leaseOf(doc, n));
        if (takeover) claimed.push({ doc, leaseId: takeover, verify: true });
      }
    }
    const result = await Promise.all(
      claimed.map(async ({ doc, leaseId, verify }): Promise<DeliveryDoc | undefined> => {
        if (verify) {
          // A take-over may be late: the attempt may have been recorded since the candidate was read.
          const current = await this.deliveries.findOne({ _id: doc._id });
          if (!current || current.dueAt.getTime() !== doc.dueAt.getTime()) return undefined;
          if (current.state !== 'pending' && current.state !== 'sending') return undefined;
        }
        await this.deliveries.updateOne(
          { _id: doc._id },
          { $set: { state: 'sending', leaseUntil, leaseId, updatedAt: now } },
        );
        return { ...doc, state: 'sending', leaseUntil, leaseId };
      }),
    );
    return result.filter((doc): doc is DeliveryDoc => doc !== undefined);
  }

  /** The next take-over key of a delivery whose newest lease for this due time has expired, if this worker wins it. */
  private async takeOver(
    doc: DeliveryDoc,
    now: Date,
    leaseOf: (takeover: number) => DeliveryLeaseDoc,
  ): Promise<string | undefined> {
    const prefix = `${doc._id}@${doc.dueAt.getTime()}#`;
    const leases = await this.leases.find({ deliveryId: doc._id }).toArray();
    let newest: DeliveryLeaseDoc | undefined;
    let newestN = -1;
    for (const lease of leases) {
      if (!lease._id.startsWith(prefix)) continue;
      const n = Number(lease._id.slice(prefix.length));
      if (n > newestN) [newest, newestN] = [lease, n];
    }
    if (!newest || newest.leaseUntil.getTime() > now.getTime()) return undefined;
    const next = leaseOf(newestN + 1);
    return (await this.insertNewLeases([next])).has(next._id) ? next._id : undefined;
  }

  /** Inserts leases; returns the ids this call inserted (the others were taken by another worker). */
  private async insertNewLeases(leases: DeliveryLeaseDoc[]): Promise<Set<string>> {
    return insertIgnoringDuplicates(this.leases, leases);
  }

  /** Deletes lease documents older than `before` (their due times are long past). */
  async pruneLeases(before: Date): Promise<number> {
    return (await this.leases.deleteMany({ createdAt: { $lt: before } })).deletedCount;
  }

  /** Stores the body built for the first attempt; false if the lease was lost. */
  async setBody(doc: DeliveryDoc, body: string): Promise<boolean> {
    const result = await this.deliveries.updateOne({ _id: doc._id, leaseId: doc.leaseId }, { $set: { body } });
    return result.matchedCount === 1;
  }

  /** Back to pending without an attempt (the payload's projection has not caught up yet). */
  async defer(doc: DeliveryDoc, dueAt: Date): Promise<void> {
    await this.deliveries.updateOne(
      { _id: doc._id, leaseId: doc.leaseId },
      { $set: { state: 'pending', dueAt, updatedAt: new Date() }, $unset: { leaseUntil: '', leaseId: '' } },
    );
  }

  /** Records an attempt and the outcome: `pending` again at `dueAt`, or final. */
  async recordAttempt(
    doc: DeliveryDoc,
    attempt: DeliveryAttempt,
    next: { state: 'pending'; dueAt: Date } | { state: 'succeeded' | 'failed' },
  ): Promise<void> {
    const now = new Date();
    const ok = next.state === 'succeeded';
    const lastError = ok ? undefined : (attempt.error ?? `http_${attempt.statusCode ?? 0}`);
    await this.deliveries.updateOne(
      { _id: doc._id, leaseId: doc.leaseId },
      {
        $push: { attempts: attempt },
        $inc: { attemptCount: 1, cycleAttempts: 1 },
        $set: {
          state: next.state,
          ...(next.state === 'pending' ? { dueAt: next.dueAt } : { completedAt: now }),
          lastAttemptAt: attempt.at,
          ...(attempt.statusCode !== undefined ? { lastStatusCode: attempt.statusCode } : {}),
          ...(lastError !== undefined ? { lastError } : {}),
          updatedAt: now,
        },
        $unset: { leaseUntil: '', leaseId: '', ...(lastError === undefined ? { lastError: '' } : {}) },
      },
    );
  }

  /** Ends a delivery without an attempt (its endpoint is gone or disabled). */
  async abandon(doc: DeliveryDoc, reason: string): Promise<void> {
    const now = new Date();
    await this.deliveries.updateOne(
      { _id: doc._id, leaseId: doc.leaseId },
      {
        $set: { state: 'failed', lastError: reason, completedAt: now, updatedAt: now },
        $unset: { leaseUntil: '', leaseId: '' },
      },
    );
  }

  /** A manual retry: due now with a fresh schedule. Not while a worker holds it. */
  async retry(tenantId: string, deliveryId: string, now: Date): Promise<boolean> {
    const result = await this.deliveries.updateOne(
      { _id: deliveryId, tenantId, state: { $in: ['failed', 'succeeded', 'pending'] } },
      { $set: { state: 'pending', dueAt: now, cycleAttempts: 0, updatedAt: now }, $unset: { completedAt: '' } },
    );
    return result.matchedCount === 1;
  }

  /** Failed deliveries of the endpoint created since `since`: due now with a fresh schedule. */
  async replay(tenantId: string, endpointId: string, since: Date, now: Date): Promise<number> {
    const result = await this.deliveries.updateMany(
      { tenantId, endpointId, state: 'failed', createdAt: { $gte: since } },
      { $set: { state: 'pending', dueAt: now, cycleAttempts: 0, updatedAt: now }, $unset: { completedAt: '' } },
    );
    return result.modifiedCount;
  }

  async countDue(now: Date): Promise<number> {
    return this.deliveries.countDocuments({ state: 'pending', dueAt: { $lte: now } });
  }

  // ---- endpoint health (collection endpoint_states) ----

  /** Clears a failing streak; `lastSuccessAt` is refreshed at most once a minute to spare a write per delivery. */
  async endpointSucceeded(endpoint: WebhookEndpointDoc, state: EndpointStateDoc | null, now: Date): Promise<void> {
    const fresh = state?.lastSuccessAt && now.getTime() - state.lastSuccessAt.getTime() < 60000;
    if (fresh && !state.failingSince) return;
    await this.endpointStates.updateOne(
      { _id: endpoint._id },
      { $set: { tenantId: endpoint.tenantId, lastSuccessAt: now }, $unset: { failingSince: '' } },
      { upsert: true },
    );
  }

  /** Notes a failure; returns since when the endpoint has been failing without a success. */
  async endpointFailed(endpoint: WebhookEndpointDoc, now: Date): Promise<Date> {
    const state = await this.endpointStates.findOne({ _id: endpoint._id });
    if (state?.failingSince) return state.failingSince;
    await this.endpointStates.updateOne(
      { _id: endpoint._id },
      { $set: { tenantId: endpoint.tenantId, failingSince: now } },
      { upsert: true },
    );
    return now;
  }

  async disableEndpoint(endpoint: WebhookEndpointDoc, reason: 'gone' | 'failing', now: Date): Promise<void> {
    await this.endpointStates.updateOne(
      { _id: endpoint._id },
      { $set: { tenantId: endpoint.tenantId, disabledAt: now, disabledReason: reason } },
      { upsert: true },
    );
  }

  async enableEndpoint(tenantId: string, endpointId: string): Promise<boolean> {
    const result = await this.endpointStates.updateOne(
      { _id: endpointId, tenantId },
      { $unset: { disabledAt: '', disabledReason: '', failingSince: '' } },
    );
    return result.matchedCount === 1;
  }
}

/** Inserts documents unordered; returns the ids this call inserted, the rest having existed (duplicate key). */
async function insertIgnoringDuplicates<T extends { _id: string }>(
  collection: Collection<T>,
  docs: T[],
): Promise<Set<string>> {
  if (docs.length === 0) return new Set();
  try {
    await collection.insertMany(docs as OptionalUnlessRequiredId<T>[], { ordered: false });
    return new Set(docs.map((doc) => doc._id));
  } catch (err) {
    if (!(err instanceof MongoBulkWriteError)) throw err;
    const errors = Array.isArray(err.writeErrors) ? err.writeErrors : [err.writeErrors];
    if (!errors.every((writeError) => (writeError as { code?: unknown }).code === 11000)) throw err;
    const existing = new Set(errors.map((writeError) => (writeError as { index: number }).index));
    return new Set(docs.filter((_, index) => !existing.has(index)).map((doc) => doc._id));
  }
}
