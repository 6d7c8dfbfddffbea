import { MongoServerError } from 'mongodb';

// For specs: a claims collection in memory with the store's rule (one document per `_id`: a second insert is refused
// with a duplicate key error, as the unique index refuses it), and faults as the store has them: an insert whose reply
// is lost (applied, then the call throws).

export class MemoryClaims<T extends { _id: string; at: Date }> {
  readonly docs = new Map<string, T>();
  private lostReplies = 0;

  /** The next insert is stored, then its call throws as a reset connection does. */
  loseNextReply(): void {
    this.lostReplies += 1;
  }

  /** Makes the claim `id` as old as `ageMs` at `now`. */
  age(id: string, ageMs: number, now = new Date()): void {
    const doc = this.docs.get(id);
    if (!doc) throw new Error(`no claim ${id}`);
    doc.at = new Date(now.getTime() - ageMs);
  }

  insertOne(doc: T): Promise<unknown> {
    if (this.docs.has(doc._id)) {
      return Promise.reject(new MongoServerError({ code: 11000, errmsg: 'E11000 duplicate key error' }));
    }
    this.docs.set(doc._id, structuredClone(doc));
    if (this.lostReplies > 0) {
      this.lostReplies -= 1;
      return Promise.reject(new Error('connection reset: reply lost'));
    }
    return Promise.resolve({ acknowledged: true });
  }

  findOne(filter: { _id: string }): Promise<T | null> {
    const doc = this.docs.get(filter._id);
    return Promise.resolve(doc ? structuredClone(doc) : null);
  }
}
