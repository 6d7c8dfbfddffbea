import { createHash } from 'node:crypto';
import { COLLECTIONS } from '@vigil/proto';
import { BSON, type Collection, type Db, type Document, type Filter } from 'mongodb';
import { ConflictError } from '../errors';
import { backoffMs, sleep, insertUnlessExists } from '@vigil/proto/platform';

/** Claims kept per document: a claim older than this many revisions is deleted when a newer one lands. */
const KEEP = 20;
/** Attempts of one change before it answers 409. */
const ATTEMPTS = 10;
/** Bound on landing claims that other writers added meanwhile. */
const CATCH_UP_ROUNDS = 8;
/** The epoch of a document that did not exist yet. */
const NEW_EPOCH = 'new';

/**
 * A stored document: its content, and the epoch and revision that wrote it. A document written by an earlier release
 * (a plain replace or update) has neither.
 */
export type Revised<C> = C & { _id: string; epoch?: string; revision?: number; updatedAt?: Date };

/** A claim on one revision of one document in one epoch, with the content that revision writes. */
interface Claim<C> {
  _id: string;
  epoch: string;
  revision: number;
  content: C;
  createdAt: Date;
}

interface Position {
  epoch: string;
  revision: number;
}

/**
 * Documents changed by read-modify-write (a tenant's rule set, its settings), where two concurrent changes must both
 * land. FerretDB v1 runs every update as a read, then a write of the whole document, so neither a conditional update
 * nor `$set` of different fields holds under concurrency; a unique `_id` insert does. A change claims the next
 * revision by inserting `{_id: "<collection>:<document>@<epoch>#<revision>", content}` into `config_revisions`: the
 * one insert that succeeds owns that revision, and the document is written from the claim. A writer that loses lands
 * the winner's claim first (its writer may have stopped before writing), then reads again and decides again on top of
 * it.
 *
 * A claim lands only on the revision before it, and a writer checks afterwards for the next claim and lands it too: a
 * write that is not atomic (FerretDB) may land late, never last. The epoch is named after the document as an earlier
 * release left it (it wrote without revisions, during a rolling upgrade or after a rollback), so claims made before
 * that write never land on it.
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
   * Applies `change` to the current document (null when there is none yet) and stores the result as the next
   * revision; `change` runs again on the newer document when another writer got there first, and may throw to refuse.
   * Returns the content stored. ConflictError after ATTEMPTS lost races.
   */
  async revise(id: string, change: (current: Revised<C> | null) => C): Promise<C> {
    for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
      const current = await this.get(id);
      const at = positionOf(current);
      const claim: Claim<C> = {
        _id: this.claimIdOf(id, at.epoch, at.revision + 1),
        epoch: at.epoch,
        revision: at.revision + 1,
        content: change(current),
        createdAt: new Date(),
      };
      if (!(await insertUnlessExists(this.claims, claim))) {
        const other = await this.claims.findOne({ _id: claim._id } as Filter<Claim<C>>);
        if (other) await this.land(id, other);
        await sleep(backoffMs({ initialMs: 5, maxMs: 200 }, attempt));
        continue;
      }
      // The document moved to another epoch meanwhile, or is KEEP revisions past this claim (whose id was deleted long
      // ago and so could be taken again): this change was decided on content that is no longer current.
      const now = positionOf(await this.get(id));
      if (now.epoch !== claim.epoch || now.revision >= claim.revision + KEEP) {
        await this.claims.deleteOne({ _id: claim._id });
        continue;
      }
      await this.land(id, claim);
      if (claim.revision > KEEP) {
        await this.claims.deleteOne({
          _id: this.claimIdOf(id, claim.epoch, claim.revision - KEEP),
        });
      }
      return claim.content;
    }
    throw new ConflictError('too many concurrent changes to the same settings; try again');
  }

  private claimIdOf(id: string, epoch: string, revision: number): string {
    return `${this.name}:${id}@${epoch}#${revision}`;
  }

  /** Writes `claim` if the document is at the revision before it, then lands the claims that follow it. */
  private async land(id: string, first: Claim<C>): Promise<void> {
    let claim: Claim<C> | null = first;
    for (let round = 0; claim && round < CATCH_UP_ROUNDS; round += 1) {
      const doc = await this.get(id);
      const at = positionOf(doc);
      // Another epoch, or already past it: nothing to write.
      if (at.epoch !== claim.epoch || at.revision >= claim.revision) return;
      if (at.revision === claim.revision - 1) {
        const target = {
          ...claim.content,
          _id: id,
          epoch: claim.epoch,
          revision: claim.revision,
          updatedAt: new Date(),
        } as Revised<C>;
        if (!doc) {
          const inserted = await insertUnlessExists(
            this.docs,
            target as Parameters<Collection<Revised<C>>['insertOne']>[0],
          );
          if (!inserted) continue;
        } else {
          // Exactly the document read: the revision in this epoch, or the earlier release's write the epoch names.
          const filter =
            doc.revision === undefined || doc.epoch === undefined
              ? { _id: id, epoch: { $exists: false }, updatedAt: doc.updatedAt }
              : { _id: id, epoch: claim.epoch, revision: at.revision };
          await this.docs.replaceOne(filter as Filter<Revised<C>>, target);
        }
        claim = await this.claims.findOne({
          _id: this.claimIdOf(id, claim.epoch, claim.revision + 1),
        } as Filter<Claim<C>>);
        continue;
      }
      // An earlier claim has not landed yet (its writer stopped): it goes first.
      claim = await this.claims.findOne({
        _id: this.claimIdOf(id, claim.epoch, at.revision + 1),
      } as Filter<Claim<C>>);
    }
  }
}

/**
 * Where a document stands: its epoch and revision; for one written without them by an earlier release, an epoch named
 * after its whole content (its `updatedAt` included, so each such write starts another) at revision 0.
 */
function positionOf(doc: Revised<Document> | null): Position {
  if (!doc) return { epoch: NEW_EPOCH, revision: 0 };
  if (typeof doc.epoch === 'string' && typeof doc.revision === 'number') {
    return { epoch: doc.epoch, revision: doc.revision };
  }
  const digest = createHash('sha256')
    .update(BSON.EJSON.stringify(doc, { relaxed: false }))
    .digest('hex');
  return { epoch: digest.slice(0, 24), revision: 0 };
}
