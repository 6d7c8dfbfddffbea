import { createHmac, randomBytes } from 'node:crypto';
import {
  COLLECTIONS,
  HASH_BANK_LIMITS,
  ulid,
  type BankAction,
  type HashKind,
  type HashMetadata,
  type HashReview,
} from '@vigil/proto';
import { type FloodLimit } from './bank-rules';
import { insertEach, insertUnlessExists } from '@vigil/proto/platform';
import type { Collection, Db } from 'mongodb';
import { ConflictError, NotFoundError, UnavailableError } from '../domain/errors';
import { guarded } from '../store/mongo-errors';

export interface BankDoc {
  _id: string;
  tenantId: string;
  name: string;
  description?: string;
  kind: HashKind;
  /** PDQ: the largest distance that matches; 0 for the exact kinds. */
  distance: number;
  policyId?: string;
  action: BankAction;
  negative: boolean;
  enabled: boolean;
  /** Flood quarantine (quarantine/flood-guard.ts); absent: off. */
  flood?: FloodLimit;
  /** Keys the bank's hash ids (base64url): an id names a hash without being one. Gone with the bank. */
  salt: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface HashDoc {
  _id: string;
  tenantId: string;
  bankId: string;
  /** The hash, lowercase hex. */
  value: string;
  metadata: HashMetadata;
  enabled: boolean;
  review: HashReview;
  /** The change that last wrote it (`<tenantId>#<n>`): a replica applying that change reads the hashes it wrote. */
  change: string;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * One change to a tenant's banks, numbered: the bank it touched (read again by whoever applies it), the hashes it
 * wrote (found by their `change` field) and the ids of those it deleted. `done` once every write is made: a reader
 * stops at a change still open (its writer has not answered yet), unless it is older than OPEN_CHANGE_MS (its writer
 * died) — then what was written is applied.
 */
export interface ChangeDoc {
  _id: string;
  tenantId: string;
  n: number;
  bankId: string;
  bank?: boolean;
  hashes?: boolean;
  removed?: string[];
  done: boolean;
  at: Date;
  /**
   * An add of hashes whose writer owes a follow-up (a retroactive pass, a feed's items): `<bankId>/<writer>` until the
   * follow-up is made. A later add by the same writer takes over the hashes still carrying the change (see addHashes).
   */
  followUp?: string;
}

/** What the writer of an add does with the hashes it wrote, once they are in: see HashBankStore.addHashes. */
export interface AddFollowUp {
  /** Who adds (`api`, a feed's id): a later add by the same writer takes over what an earlier one left owed. */
  writer: string;
  run: (added: HashDoc[]) => Promise<void>;
}

interface HeadDoc {
  _id: string;
  n: number;
}

/** A change left open longer than this (milliseconds) is taken as done: its writer failed part way. */
export const OPEN_CHANGE_MS = 30_000;

export type BankFields = Pick<
  BankDoc,
  'name' | 'description' | 'kind' | 'distance' | 'policyId' | 'action' | 'negative' | 'enabled' | 'flood'
>;
export type BankPatch = Partial<Omit<BankFields, 'kind' | 'policyId' | 'description' | 'flood'>> & {
  policyId?: string | null;
  description?: string | null;
  flood?: FloodLimit | null;
};

/**
 * The store of hash banks, owned by the moderator. Every query selects by equality on one top-level field (`_id`,
 * `tenantId`, `bankId`, `change`): the only filters FerretDB pushes down to an index. Each write is followed by a
 * numbered change (ChangeDoc) that replicas apply to their in-memory indexes (bank-indexes.ts).
 */
export class HashBankStore {
  private readonly banks: Collection<BankDoc>;
  private readonly hashes: Collection<HashDoc>;
  private readonly changes: Collection<ChangeDoc>;
  private readonly heads: Collection<HeadDoc>;

  constructor(
    db: Db,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.banks = db.collection(COLLECTIONS.hashBanks);
    this.hashes = db.collection(COLLECTIONS.bankHashes);
    this.changes = db.collection(COLLECTIONS.hashBankChanges);
    this.heads = db.collection(COLLECTIONS.hashBankHeads);
  }

  async ensureIndexes(): Promise<void> {
    await guarded(() => this.banks.createIndex({ tenantId: 1 }, { name: 'tenant' }));
    await guarded(() => this.hashes.createIndex({ tenantId: 1 }, { name: 'tenant' }));
    await guarded(() => this.hashes.createIndex({ bankId: 1 }, { name: 'bank' }));
    await guarded(() => this.hashes.createIndex({ change: 1 }, { name: 'change' }));
    await guarded(() => this.changes.createIndex({ followUp: 1 }, { name: 'follow_up' }));
  }

  // Banks

  listBanks(tenantId: string): Promise<BankDoc[]> {
    return guarded(() => this.banks.find({ tenantId }).toArray()).then((banks) =>
      banks.sort((a, b) => (a._id < b._id ? -1 : 1)),
    );
  }

  async getBank(tenantId: string, bankId: string): Promise<BankDoc> {
    const bank = await guarded(() => this.banks.findOne({ _id: bankId }));
    if (!bank || bank.tenantId !== tenantId) throw new NotFoundError('hash bank not found', { bankId });
    return bank;
  }

  async createBank(tenantId: string, fields: BankFields): Promise<BankDoc> {
    const existing = await this.listBanks(tenantId);
    if (existing.length >= HASH_BANK_LIMITS.banks) {
      throw new ConflictError(`at most ${HASH_BANK_LIMITS.banks} hash banks`, { limit: HASH_BANK_LIMITS.banks });
    }
    const now = this.now();
    const bank: BankDoc = {
      _id: `bnk_${ulid()}`,
      tenantId,
      ...stripUndefined(fields),
      salt: randomBytes(16).toString('base64url'),
      createdAt: now,
      updatedAt: now,
    };
    await this.change(tenantId, { bankId: bank._id, bank: true }, async () => {
      await guarded(() => this.banks.insertOne(bank));
    });
    return bank;
  }

  async updateBank(tenantId: string, bankId: string, patch: BankPatch): Promise<BankDoc> {
    const bank = await this.getBank(tenantId, bankId);
    const next: BankDoc = { ...bank, ...stripUndefined(patch), updatedAt: this.now() } as BankDoc;
    if (patch.policyId === null) delete next.policyId;
    if (patch.description === null) delete next.description;
    if (patch.flood === null) delete next.flood;
    await this.change(tenantId, { bankId, bank: true }, async () => {
      await guarded(() => this.banks.replaceOne({ _id: bankId }, next));
    });
    return next;
  }

  /** Deletes the bank and every hash it holds. */
  async deleteBank(tenantId: string, bankId: string): Promise<void> {
    await this.getBank(tenantId, bankId);
    await this.change(tenantId, { bankId, bank: true }, async () => {
      await guarded(() => this.hashes.deleteMany({ bankId }));
      await guarded(() => this.banks.deleteOne({ _id: bankId }));
    });
  }

  // Hashes

  /**
   * Adds hashes to a bank; a hash the bank holds already keeps its metadata and state (counted as a duplicate).
   *
   * With a follow-up, the change stays owed (`followUp`) until `followUp.run` has made it, after the change is done.
   * An add that failed part way (a reply lost, its follow-up failed) leaves hashes that a retry finds as duplicates. So
   * an add takes over the hashes that an owed change of the same writer on the bank wrote: those it was asked for, and
   * all of them once the change is older than OPEN_CHANGE_MS (its writer is taken as gone, as readers take it). They
   * are stamped with this change, count as added, and get this follow-up. A hash an earlier add followed up is a
   * duplicate. A concurrent add of the same writer and hashes may take over some of the other's: both follow them up.
   */
  async addHashes(
    tenantId: string,
    bankId: string,
    rows: readonly { value: string; metadata: HashMetadata }[],
    followUp?: AddFollowUp,
  ): Promise<{ added: HashDoc[]; duplicates: number }> {
    const bank = await this.getBank(tenantId, bankId);
    const now = this.now();
    const seen = new Set<string>();
    const docs: Omit<HashDoc, 'change'>[] = [];
    for (const row of rows) {
      const _id = hashIdOf(bank, row.value);
      if (seen.has(_id)) continue;
      seen.add(_id);
      docs.push(newHash(tenantId, bankId, _id, row, now));
    }
    const owedKey = followUp && `${bankId}/${followUp.writer}`;
    const written: HashDoc[] = [];
    const settled: string[] = [];
    const own = await this.change(tenantId, { bankId, hashes: true, followUp: owedKey }, async (change) => {
      const stamped = docs.map((doc) => ({ ...doc, change }));
      const inserted = await guarded(() => insertEach(this.hashes, stamped));
      stamped.forEach((doc, index) => inserted[index] && written.push(doc));
      if (!owedKey) return;
      const duplicates = new Set(stamped.filter((_, index) => !inserted[index]).map((doc) => doc._id));
      const owed = await guarded(() => this.changes.find({ followUp: owedKey }).toArray());
      for (const earlier of owed.filter((doc) => doc._id !== change)) {
        const gone = now.getTime() - earlier.at.getTime() >= OPEN_CHANGE_MS;
        const held = await this.hashesOfChange(earlier);
        const taken = held.filter((hash) => gone || duplicates.has(hash._id));
        const moved = await this.restamp(taken, earlier._id, change);
        written.push(...moved);
        if (gone && moved.length === held.length) settled.push(earlier._id);
      }
    });
    if (followUp) {
      await followUp.run(written);
      for (const _id of [own, ...settled]) {
        await guarded(() => this.changes.updateOne({ _id }, { $unset: { followUp: '' } }));
      }
    }
    const added = written.filter((hash) => seen.has(hash._id));
    return { added, duplicates: rows.length - added.length };
  }

  /**
   * Moves hashes that still carry change `from` to change `to`; returns those moved. Each write is conditional on
   * `from` (read, then written by `_id` on FerretDB: a hash rewritten meanwhile by another change may be moved anyway,
   * and is then applied with `to`).
   */
  private async restamp(hashes: readonly HashDoc[], from: string, to: string): Promise<HashDoc[]> {
    const moved: HashDoc[] = [];
    for (let at = 0; at < hashes.length; at += 50) {
      const slice = hashes.slice(at, at + 50);
      const results = await guarded(() =>
        Promise.all(
          slice.map((hash) => this.hashes.updateOne({ _id: hash._id, change: from }, { $set: { change: to } })),
        ),
      );
      slice.forEach((hash, index) => results[index]?.modifiedCount === 1 && moved.push({ ...hash, change: to }));
    }
    return moved;
  }

  async getHash(tenantId: string, bankId: string, hashId: string): Promise<HashDoc> {
    const hash = await guarded(() => this.hashes.findOne({ _id: hashId }));
    if (!hash || hash.tenantId !== tenantId || hash.bankId !== bankId) {
      throw new NotFoundError('hash not found', { hashId });
    }
    return hash;
  }

  /** Bank hashes by id (for the matches of an image), those that still exist. */
  async hashesById(ids: readonly string[]): Promise<HashDoc[]> {
    const found = await guarded(() => Promise.all(ids.map((_id) => this.hashes.findOne({ _id }))));
    return found.filter((doc): doc is HashDoc => doc !== null);
  }

  /**
   * A page of a bank's hashes by id. The bank's hashes are selected by `bankId` (an index); the order and the cursor
   * are applied by the store to all of them (FerretDB sorts in Go), so a page of a very large bank costs its size.
   */
  async listHashes(
    tenantId: string,
    bankId: string,
    page: { limit: number; startingAfter?: string },
  ): Promise<{ items: HashDoc[]; hasMore: boolean }> {
    await this.getBank(tenantId, bankId);
    const filter = page.startingAfter ? { bankId, _id: { $gt: page.startingAfter } } : { bankId };
    const items = await guarded(() =>
      this.hashes
        .find(filter)
        .sort({ _id: 1 })
        .limit(page.limit + 1)
        .toArray(),
    );
    return { items: items.slice(0, page.limit), hasMore: items.length > page.limit };
  }

  async updateHash(
    tenantId: string,
    bankId: string,
    hashId: string,
    patch: { enabled?: boolean; review?: HashReview; metadata?: HashMetadata },
  ): Promise<HashDoc> {
    const hash = await this.getHash(tenantId, bankId, hashId);
    let next: HashDoc = hash;
    await this.change(tenantId, { bankId, hashes: true }, async (change) => {
      next = { ...hash, ...stripUndefined(patch), change, updatedAt: this.now() };
      await guarded(() => this.hashes.replaceOne({ _id: hashId }, next));
    });
    return next;
  }

  /** A withdrawal: the hash is deleted; the change that tells the replicas names only its id. */
  async withdrawHash(tenantId: string, bankId: string, hashId: string): Promise<void> {
    await this.getHash(tenantId, bankId, hashId);
    await this.change(tenantId, { bankId, removed: [hashId] }, async () => {
      await guarded(() => this.hashes.deleteOne({ _id: hashId }));
    });
  }

  /**
   * Withdraws many hashes of a bank at once (a feed's withdrawals): one change per 500 ids; ids the bank does not hold
   * are skipped. Each hash is deleted by `_id` (an `$in` would be applied by FerretDB to the whole collection).
   */
  async withdrawHashes(tenantId: string, bankId: string, hashIds: readonly string[]): Promise<number> {
    await this.getBank(tenantId, bankId);
    let withdrawn = 0;
    for (let from = 0; from < hashIds.length; from += 500) {
      const held = (await this.hashesById(hashIds.slice(from, from + 500)))
        .filter((hash) => hash.tenantId === tenantId && hash.bankId === bankId)
        .map((hash) => hash._id);
      if (held.length === 0) continue;
      await this.change(tenantId, { bankId, removed: held }, async () => {
        for (let at = 0; at < held.length; at += 50) {
          await guarded(() => Promise.all(held.slice(at, at + 50).map((_id) => this.hashes.deleteOne({ _id }))));
        }
      });
      withdrawn += held.length;
    }
    return withdrawn;
  }

  // What replicas read to keep their indexes

  /** The last change number written for the tenant (0 when none). */
  async head(tenantId: string): Promise<number> {
    const head = await guarded(() => this.heads.findOne({ _id: tenantId }));
    return head?.n ?? 0;
  }

  /** Change `n` of the tenant, if written. */
  changeAt(tenantId: string, n: number): Promise<ChangeDoc | null> {
    return guarded(() => this.changes.findOne({ _id: changeId(tenantId, n) }));
  }

  /** The hashes a change wrote that still carry it (a later change that rewrote one carries that one). */
  hashesOfChange(change: Pick<ChangeDoc, '_id'>): Promise<HashDoc[]> {
    return guarded(() => this.hashes.find({ change: change._id }).toArray());
  }

  bankById(bankId: string): Promise<BankDoc | null> {
    return guarded(() => this.banks.findOne({ _id: bankId }));
  }

  /** Everything of a tenant's banks, for a replica loading its index. */
  async snapshot(tenantId: string): Promise<{ banks: BankDoc[]; hashes: HashDoc[] }> {
    const [banks, hashes] = await guarded(() =>
      Promise.all([this.banks.find({ tenantId }).toArray(), this.hashes.find({ tenantId }).toArray()]),
    );
    return { banks, hashes };
  }

  /**
   * Makes the writes of `write` as change n: the change is claimed open (a unique insert: two writers never share a
   * number), the writes are made, then the change is marked done and the head moved on. A failed write leaves the
   * change open; readers apply it after OPEN_CHANGE_MS.
   */
  private async change(
    tenantId: string,
    what: Pick<ChangeDoc, 'bankId' | 'bank' | 'hashes' | 'removed' | 'followUp'>,
    write: (changeId: string) => Promise<void>,
  ): Promise<string> {
    let n = (await this.head(tenantId)) + 1;
    let doc: ChangeDoc | undefined;
    for (let attempt = 0; attempt < 100; attempt++, n++) {
      const candidate: ChangeDoc = {
        _id: changeId(tenantId, n),
        tenantId,
        n,
        ...stripUndefined(what),
        done: false,
        at: this.now(),
      };
      if (await guarded(() => insertUnlessExists(this.changes, candidate))) {
        doc = candidate;
        break;
      }
    }
    if (!doc) throw new UnavailableError('too many concurrent bank changes, try again');
    await write(doc._id);
    await guarded(() => this.changes.updateOne({ _id: doc._id }, { $set: { done: true } }));
    await guarded(() => this.heads.updateOne({ _id: tenantId }, { $max: { n } }, { upsert: true }));
    return doc._id;
  }
}

export const changeId = (tenantId: string, n: number): string => `${tenantId}#${n}`;
/** The number of a change, from its id. */
export const changeNumber = (id: string): number => Number(id.slice(id.lastIndexOf('#') + 1));

/** A hash as it is added to a bank at `now` (its change is stamped when it is written): enabled, not reviewed. */
export function newHash(
  tenantId: string,
  bankId: string,
  _id: string,
  row: { value: string; metadata: HashMetadata },
  now: Date,
): Omit<HashDoc, 'change'> {
  return {
    _id,
    tenantId,
    bankId,
    value: row.value,
    metadata: row.metadata,
    enabled: true,
    review: 'unreviewed',
    createdAt: now,
    updatedAt: now,
  };
}

/** A hash's id in its bank: a digest keyed by the bank's salt (the same hash added twice is one hash). */
export function hashIdOf(bank: Pick<BankDoc, 'salt'>, value: string): string {
  return `hsh_${createHmac('sha256', bank.salt).update(value).digest('base64url').slice(0, 22)}`;
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== null)) as T;
}
