import { COLLECTIONS } from '@vigil/proto';
import type { Collection, Db, Document, Filter } from 'mongodb';
import { ConflictError } from '../http/errors';
import { backoffMs } from '../platform/retry';
import { isDuplicateKey } from './tenant-store';

/** Claims kept per document: a claim older than this many revisions is deleted when a newer one lands. */
const KEEP = 20;
/** Attempts of one change before it answers 409. */
const ATTEMPTS = 10;
/** Bound on landing claims that other writers added meanwhile. */
const CATCH_UP_ROUNDS = 8;

/** A stored document: its content, the revision that wrote it, and when. */
export type Revised<C> = C & { _id: string; revision: number; updatedAt: Date };

/** A claim on one revision of one document, with the content that revision writes. */
interface Claim<C> {
  _id: string;
  content: C;
  createdAt: Date;
}

/**
 * Documents changed by read-modify-write (a tenant's rule set, its settings), where two concurrent changes must both
 * land. FerretDB v1 runs every update as a read, then a write of the whole document, so neither a conditional update
 * nor `$set` of different fields holds under concurrency; a unique `_id` insert does. A change claims the next
 * revision by inserting `{_id: "<document>#<revision>", content}` into the claims collection: the one insert that
 * succeeds owns that revision, and the document is written from the claim. A writer that loses lands the winner's
 * claim first (its writer may have stopped before writing), then reads again and decides again on top of it.
 *
 * The write of a claim is conditional on the revision, and a writer checks afterwards for a newer claim and lands it
 * too: a conditional write that is not atomic (FerretDB) may land after a newer one, never last.
 */
export class RevisedDocs<C extends Document> {
  private readonly docs: Collection<Revised<C>>;
  private readonly claims: Collection<Claim<C>>;

  /** The documents of collection `name`; their claims live in `config_revisions`, named after it. */
  constructor(
    db: Db,
    private readonly name: string,
  ) {
    this.docs = db.collection<Revised<C>>(name);
    this.claims = db.collection<Claim<C>>(COLLECTIONS.configRevisions);
  }

  async get(id: string): Promise<Revised<C> | null> {
    return (await this.docs.findOne({ _id: id } as Filter<Revised<C>>)) as Revised<C> | null;
  }

  /**
   * Applies `change` to the current content (null when there is no document yet) and stores the result as the next
   * revision; `change` runs again on the newer content when another writer got there first, and may throw to refuse.
   * Returns the content stored. ConflictError after ATTEMPTS lost races.
   */
  async revise(id: string, change: (current: Revised<C> | null) => C): Promise<C> {
    for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
      const current = await this.get(id);
      const base = current?.revision ?? 0;
      const content = change(current);
      const revision = base + 1;
      const claimId = this.claimIdOf(id, revision);
      try {
        await this.claims.insertOne({ _id: claimId, content, createdAt: new Date() });
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        const other = await this.claims.findOne({ _id: claimId } as Filter<Claim<C>>);
        if (other) await this.land(id, revision, other.content);
        await new Promise((resolve) => setTimeout(resolve, backoffMs({ initialMs: 5, maxMs: 200 }, attempt)));
        continue;
      }
      // A claim inserted on a document already KEEP revisions past it was one deleted long ago: this change was
      // decided on content that is no longer current.
      const now = await this.get(id);
      if ((now?.revision ?? 0) >= revision + KEEP) {
        await this.claims.deleteOne({ _id: claimId });
        continue;
      }
      await this.land(id, revision, content);
      if (revision > KEEP) await this.claims.deleteOne({ _id: this.claimIdOf(id, revision - KEEP) });
      return content;
    }
    throw new ConflictError('too many concurrent changes to the same settings; try again');
  }

  private claimIdOf(id: string, revision: number): string {
    return `${this.name}:${id}#${revision}`;
  }

  /** Writes `content` as `revision` unless a newer revision is stored, then lands any newer claim. */
  private async land(id: string, revision: number, content: C): Promise<void> {
    let next: { revision: number; content: C } | null = { revision, content };
    for (let round = 0; next && round < CATCH_UP_ROUNDS; round += 1) {
      const target = { ...next.content, _id: id, revision: next.revision, updatedAt: new Date() } as Revised<C>;
      // A document written before revisions were kept has none: any revision is newer.
      const older = {
        _id: id,
        $or: [{ revision: { $lt: next.revision } }, { revision: { $exists: false } }],
      } as Filter<Revised<C>>;
      if ((await this.docs.replaceOne(older, target)).matchedCount === 0) {
        try {
          await this.docs.insertOne(target as Parameters<Collection<Revised<C>>['insertOne']>[0]);
        } catch (err) {
          if (!isDuplicateKey(err)) throw err;
          await this.docs.replaceOne(older, target);
        }
      }
      const newer: Claim<C> | null = await this.claims.findOne({ _id: this.claimIdOf(id, next.revision + 1) } as Filter<
        Claim<C>
      >);
      next = newer ? { revision: next.revision + 1, content: newer.content } : null;
    }
  }
}
