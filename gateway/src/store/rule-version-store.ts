import { COLLECTIONS, type Rule } from '@vigil/proto';
import type { Collection, Db } from 'mongodb';
import { RevisedDocs } from './revised-docs';

/** How a version came to be: written live (PUT, a preset added, a roll-back) or saved as a draft beside the live one. */
export type RuleVersionKind = 'live' | 'draft';

/** One rule set a tenant wrote, never changed once stored. */
export interface RuleVersionDoc {
  _id: string; // <tenantId>#<version>
  tenantId: string;
  /** 1, 2, 3… per tenant, in the order the numbers were given out. */
  version: number;
  rules: Rule[];
  kind: RuleVersionKind;
  /** Who wrote it: `api_key:<keyId>` or `member:<memberId>`. */
  author: string;
  note?: string;
  /** A roll-back: the version whose rules it copies. */
  basedOn?: number;
  createdAt: Date;
}

/** Versions listed at most per page, and read at most per list (a tenant's versions are read by its id only). */
const MAX_PAGE = 100;

/**
 * The rule set versions of every tenant (the gateway is their only writer). A number is given out by a RevisedDocs
 * counter per tenant, so two concurrent writes never share one, even on FerretDB; the version document is inserted
 * under `<tenantId>#<number>`. A write that fails after taking a number leaves a gap, never a duplicate.
 */
export class RuleVersionStore {
  private readonly versions: Collection<RuleVersionDoc>;
  private readonly counters: RevisedDocs<{ count: number }>;

  constructor(db: Db) {
    this.versions = db.collection(COLLECTIONS.ruleVersions);
    this.counters = new RevisedDocs(db, COLLECTIONS.ruleVersionCounters);
  }

  async ensureIndexes(): Promise<void> {
    await this.versions.createIndex({ tenantId: 1 }, { name: 'tenant' });
  }

  /** The next version number of the tenant. */
  async allocate(tenantId: string): Promise<number> {
    return (await this.counters.revise(tenantId, (current) => ({ count: (current?.count ?? 0) + 1 }))).count;
  }

  async insert(doc: Omit<RuleVersionDoc, '_id' | 'createdAt'>): Promise<RuleVersionDoc> {
    const stored: RuleVersionDoc = { ...doc, _id: idOf(doc.tenantId, doc.version), createdAt: new Date() };
    await this.versions.insertOne(stored);
    return stored;
  }

  get(tenantId: string, version: number): Promise<RuleVersionDoc | null> {
    return this.versions.findOne({ _id: idOf(tenantId, version) });
  }

  /**
   * Newest first, `limit` at most, below `before` when given. Selected by the tenant (an equality the store serves
   * from the index) and ordered here: a tenant's versions are few next to its records, and this is not a hot path.
   */
  async list(tenantId: string, limit: number, before?: number): Promise<{ docs: RuleVersionDoc[]; hasMore: boolean }> {
    const all = await this.versions.find({ tenantId }, { projection: { rules: 0 } }).toArray();
    const newest = all
      .filter((doc) => before === undefined || doc.version < before)
      .sort((a, b) => b.version - a.version);
    const page = Math.min(limit, MAX_PAGE);
    return { docs: newest.slice(0, page), hasMore: newest.length > page };
  }
}

const idOf = (tenantId: string, version: number): string => `${tenantId}#${version}`;
