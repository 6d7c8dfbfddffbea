import { randomUUID } from 'node:crypto';
import { COLLECTIONS } from '@vigil/proto';
import type { Collection, Db } from 'mongodb';
import type { DeliveryDoc, DeliveryStore } from './delivery-store';
import { insertIgnoringDuplicates } from './insert-new';

/** How long the due deliveries read by one claim serve the next ones, and how many one read takes at least. */
const CANDIDATES_FOR_MS = 250;
const CANDIDATES_READ = 256;

/** One worker's claim on one attempt: `_id` is `<delivery id>@<due time in ms>#<take-over number>`. */
export interface DeliveryLeaseDoc {
  _id: string;
  deliveryId: string;
  leaseUntil: Date;
  createdAt: Date;
}

/** A worker that takes deliveries as they are inserted (the local scheduler), within the slots it has free. */
export interface LeaseHolder {
  /** How long a delivery leased to it stays its own, milliseconds. */
  readonly leaseMs: number;
  /** Promises a slot for a delivery to this endpoint; false when there is no room. */
  reserve(endpointId: string): boolean;
  /** The delivery was inserted leased to the holder: it works it in the reserved slot. */
  adopt(doc: DeliveryDoc): void;
  /** The reserved slot is not needed (the insert failed, or the delivery existed). */
  release(endpointId: string): void;
}

/**
 * Who may attempt a delivery, at most one worker at a time across notifier processes. A worker leases a delivery in
 * one of two ways, both exclusive by a unique `_id` insert:
 * - `claim`: a due delivery, by inserting its lease key into `delivery_leases`;
 * - `insertNew`: a new delivery, by inserting it into `deliveries` already leased to the local worker.
 * Conditional updates are not atomic on FerretDB v1 (read, filter in Go, write by `_id`), so two workers whose
 * `updateMany({state: 'pending'})` raced would both send. The lease ends when the worker records the attempt
 * (`DeliveryStore` writes conditioned on `leaseId`), or when it expires and another worker takes it over.
 */
export class DeliveryLeases {
  private readonly leases: Collection<DeliveryLeaseDoc>;
  /**
   * Due deliveries read by the last claim and not taken yet, reused by the claims of the next CANDIDATES_FOR_MS. On
   * FerretDB v1 reading the due deliveries decodes every pending one (only `state` is pushed down), so re-reading
   * after each finished attempt made the backlog's size the cost of every claim. A reused candidate may have changed
   * since (another worker sent it, a retry rescheduled it), so it is checked again before it is marked.
   */
  private candidates: { docs: DeliveryDoc[]; readAt: number } = { docs: [], readAt: 0 };

  constructor(
    db: Db,
    private readonly deliveries: DeliveryStore,
  ) {
    this.leases = db.collection(COLLECTIONS.deliveryLeases);
  }

  async ensureIndexes(): Promise<void> {
    await this.leases.createIndex({ deliveryId: 1 }, { name: 'delivery' });
  }

  /**
   * Takes due deliveries (and, with `reclaim`, ones whose worker's lease expired, e.g. after a crash) for this worker.
   * One lease key per (delivery, due time, take-over). Lease documents are kept (a stale candidate read before the
   * attempt was recorded finds its key taken) and removed by `prune` long after they matter.
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
    const reused = now.getTime() - this.candidates.readAt < CANDIDATES_FOR_MS && this.candidates.docs.length > 0;
    if (!reused) {
      this.candidates = {
        docs: await this.deliveries.due(now, Math.max(limit * 4, CANDIDATES_READ)),
        readAt: now.getTime(),
      };
    }
    const pending = this.candidates.docs;
    const expired = reclaim ? await this.deliveries.leaseExpired(now, limit) : [];
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
    const picked = new Set(chosen);
    this.candidates.docs = pending.filter((doc) => !picked.has(doc));
    if (chosen.length === 0) return [];
    const leaseUntil = new Date(now.getTime() + leaseMs);
    const leaseOf = (doc: DeliveryDoc, takeover: number): DeliveryLeaseDoc => ({
      _id: `${doc._id}@${doc.dueAt.getTime()}#${takeover}`,
      deliveryId: doc._id,
      leaseUntil,
      createdAt: now,
    });
    const won = await insertIgnoringDuplicates(
      this.leases,
      chosen.map((doc) => leaseOf(doc, 0)),
    );
    const claimed: { doc: DeliveryDoc; leaseId: string; verify: boolean }[] = [];
    for (const doc of chosen) {
      const first = leaseOf(doc, 0)._id;
      // A delivery in `sending` whose first key was free was leased at insert; check it is still that delivery.
      if (won.has(first)) claimed.push({ doc, leaseId: first, verify: reused || doc.state === 'sending' });
      else if (reclaim) {
        const takeover = await this.takeOver(doc, now, (n) => leaseOf(doc, n));
        if (takeover) claimed.push({ doc, leaseId: takeover, verify: true });
      }
    }
    const result = await Promise.all(
      claimed.map(async ({ doc, leaseId, verify }): Promise<DeliveryDoc | undefined> => {
        if (verify) {
          // A take-over (or a reused candidate) may be late: the attempt may have been recorded since it was read.
          const current = await this.deliveries.byId(doc._id);
          if (!current || current.dueAt.getTime() !== doc.dueAt.getTime()) return undefined;
          if (current.state !== 'pending' && current.state !== 'sending') return undefined;
        }
        await this.deliveries.markSending(doc._id, { leaseId, leaseUntil }, now);
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
    return (await insertIgnoringDuplicates(this.leases, [next])).has(next._id) ? next._id : undefined;
  }

  /**
   * Inserts the deliveries that do not exist yet (one unordered insertMany). Those with a body that `holder` has room
   * for go in already leased to it, so their first attempt costs no claim write (updates are the expensive part on
   * FerretDB); a crash leaves them to expire and be taken over like any lease. Returns the ids that were new, and
   * which of them the holder adopted.
   */
  async insertNew(docs: DeliveryDoc[], holder?: LeaseHolder): Promise<{ inserted: Set<string>; adopted: Set<string> }> {
    const local = new Set<string>();
    if (holder) {
      const leaseUntil = new Date(Date.now() + holder.leaseMs);
      for (const doc of docs) {
        if (!doc.body || !holder.reserve(doc.endpointId)) continue;
        Object.assign(doc, { state: 'sending', leaseId: randomUUID(), leaseUntil });
        local.add(doc._id);
      }
    }
    let inserted: Set<string>;
    try {
      inserted = await this.deliveries.insertNew(docs);
    } catch (err) {
      for (const doc of docs) if (local.has(doc._id)) holder?.release(doc.endpointId);
      throw err;
    }
    const adopted = new Set<string>();
    for (const doc of docs) {
      if (!local.has(doc._id)) continue;
      // An existing delivery (a re-consumed event) belongs to whoever holds it, not to this copy.
      if (inserted.has(doc._id)) {
        holder?.adopt(doc);
        adopted.add(doc._id);
      } else holder?.release(doc.endpointId);
    }
    return { inserted, adopted };
  }

  /** Deletes lease documents older than `before` (their due times are long past). */
  async prune(before: Date): Promise<number> {
    return (await this.leases.deleteMany({ createdAt: { $lt: before } })).deletedCount;
  }
}
