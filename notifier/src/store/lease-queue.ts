import { MongoServerError, type Collection } from 'mongodb';

/** The fields every queued job document has (user emails, payment actions). */
export interface QueuedDoc {
  _id: string;
  /** `pending` (waiting for `dueAt`) and `sending` (claimed) belong to the queue; every other state is final. */
  state: string;
  attemptCount: number;
  attempts: unknown[];
  dueAt: Date;
  leaseUntil?: Date;
  leaseId?: string;
  lastError?: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface LeaseDoc {
  _id: string;
  createdAt: Date;
}

/**
 * A durable job queue in two collections: the jobs, and claims on their attempts. Jobs wait in MongoDB for their due
 * time, never in a Kafka partition or a process's memory, so a restart loses nothing: an expired claim is taken over.
 * The stores of each kind of job own one and add their own reads.
 */
export class LeaseQueue<T extends QueuedDoc> {
  private readonly docs: Collection<QueuedDoc>;

  constructor(
    docs: Collection<T>,
    private readonly leases: Collection<LeaseDoc>,
  ) {
    // The queue touches only the fields of QueuedDoc.
    this.docs = docs as unknown as Collection<QueuedDoc>;
  }

  async ensureIndexes(): Promise<void> {
    await this.docs.createIndex({ state: 1, dueAt: 1 }, { name: 'due' });
    await this.leases.createIndex({ createdAt: 1 }, { name: 'created' });
  }

  /** Inserts the job unless it exists (a re-consumed event); true if this call inserted it. */
  async insertNew(doc: T): Promise<boolean> {
    try {
      await this.docs.insertOne(doc);
      return true;
    } catch (err) {
      if (err instanceof MongoServerError && err.code === 11000) return false;
      throw err;
    }
  }

  /**
   * Takes due jobs, and ones whose worker's lease expired. As for deliveries, exclusivity comes from a unique `_id`
   * insert into the leases collection (conditional updates are not atomic on FerretDB v1): the key names the job and
   * its due time, plus the expired lease's end for a take-over, so a candidate read before another worker's attempt
   * was recorded finds its key taken.
   */
  async claim(now: Date, leaseMs: number, limit: number): Promise<T[]> {
    const pending = await this.docs
      .find({ state: 'pending', dueAt: { $lte: now } })
      .sort({ dueAt: 1 })
      .limit(limit)
      .toArray();
    const expired = await this.docs
      .find({ state: 'sending', leaseUntil: { $lte: now } })
      .limit(limit)
      .toArray();
    const leaseUntil = new Date(now.getTime() + leaseMs);
    const claimed: T[] = [];
    for (const doc of [...pending, ...expired].slice(0, limit)) {
      const takeover = doc.state === 'sending' ? `~${doc.leaseUntil?.getTime() ?? 0}` : '';
      const leaseId = `${doc._id}@${doc.dueAt.getTime()}${takeover}`;
      try {
        await this.leases.insertOne({ _id: leaseId, createdAt: now });
      } catch (err) {
        if (err instanceof MongoServerError && err.code === 11000) continue;
        throw err;
      }
      if (takeover) {
        // The original worker may have recorded its attempt since the candidate was read.
        const current = await this.docs.findOne({ _id: doc._id });
        if (current?.state !== 'sending' || current.leaseUntil?.getTime() !== doc.leaseUntil?.getTime()) continue;
      }
      await this.docs.updateOne({ _id: doc._id }, { $set: { state: 'sending', leaseUntil, leaseId, updatedAt: now } });
      claimed.push({ ...doc, state: 'sending', leaseUntil, leaseId } as T);
    }
    return claimed;
  }

  /**
   * Records an attempt (if one was made) and the next state with its fields (`dueAt` for `pending`, outcome fields for
   * a final state), and lets go of the lease. A worker whose lease was taken over writes nothing.
   */
  async finish(doc: T, attempt: unknown, state: string, fields: Record<string, unknown> = {}): Promise<void> {
    const now = new Date();
    await this.docs.updateOne(
      { _id: doc._id, leaseId: doc.leaseId },
      {
        ...(attempt !== undefined ? { $push: { attempts: attempt }, $inc: { attemptCount: 1 } } : {}),
        $set: { ...fields, state, updatedAt: now },
        $unset: { leaseUntil: '', leaseId: '' },
      },
    );
  }

  async pruneLeases(before: Date): Promise<number> {
    return (await this.leases.deleteMany({ createdAt: { $lt: before } })).deletedCount;
  }
}
