import { COLLECTIONS, LIMITS } from '@vigil/proto';
import { type Rule } from '@vigil/proto/rules';
import { mapInTurns } from '@vigil/proto/platform';
import type { Collection, Db } from 'mongodb';
import { LimitExceededError } from '../errors';
import { RevisedDocs } from './revised-docs';

/** How a version came to be: written live (PUT, a preset added, a roll-back) or saved as a draft beside the live one. */
type RuleVersionKind = 'live' | 'draft';

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

/** Versions listed at most per page. */
const MAX_PAGE = 100;
/** Version reads in flight at once for one page. */
const READS_AT_ONCE = 8;

/**
 * The rule set versions of every tenant (the gateway is their only writer). A number is given out by a RevisedDocs
 * counter per tenant, so two concurrent writes never share one, even on FerretDB; the version document is inserted
 * under `<tenantId>#<number>`. A write that fails after taking a number leaves a gap, never a duplicate. The counter
 * also bounds a tenant's versions (`maxVersions`): the number past it is refused, exactly, as the counter's changes are
 * serialized.
 */
export class RuleVersionStore {
  private readonly versions: Collection<RuleVersionDoc>;
  private readonly counters: RevisedDocs<{ count: number }>;
  private readonly maxVersions: number;

  /** `maxVersions`: version numbers a tenant may be given (LIMITS.ruleVersions). */
  constructor(db: Db, options: { maxVersions?: number } = {}) {
    this.versions = db.collection(COLLECTIONS.ruleVersions);
    this.counters = new RevisedDocs(db, COLLECTIONS.ruleVersionCounters);
    this.maxVersions = options.maxVersions ?? LIMITS.ruleVersions;
  }

  async ensureIndexes(): Promise<void> {
    await this.versions.createIndex({ tenantId: 1 }, { name: 'tenant' });
  }

  /** The next version number of the tenant; LimitExceededError (409) once `maxVersions` were given out. */
  async allocate(tenantId: string): Promise<number> {
    const max = this.maxVersions;
    const next = await this.counters.revise(tenantId, (current) => {
      const count = current?.count ?? 0;
      if (count >= max) {
        throw new LimitExceededError(`a tenant has at most ${max} rule set versions`, { limit: max });
      }
      return { count: count + 1 };
    });
    return next.count;
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
   * Newest first, `limit` at most, below `before` when given, without their rules. A page reads the versions it lists
   * and one more (whether there are older ones), each by `_id` from its number, counting down from the tenant's
   * counter: on FerretDB v1 a query by tenant would read every version of the tenant for a page of one, since only
   * the equality reaches the index and the sort and limit run over all it matched. A number a failed write took has no
   * version: the reads go on below it, twice as many each round, so a run of gaps costs few rounds.
   */
  async list(tenantId: string, limit: number, before?: number): Promise<{ docs: RuleVersionDoc[]; hasMore: boolean }> {
    const page = Math.min(limit, MAX_PAGE);
    const given = (await this.counters.get(tenantId))?.count ?? 0;
    let next = before === undefined ? given : Math.min(given, before - 1);
    const docs: RuleVersionDoc[] = [];
    for (let round = 0; docs.length <= page && next >= 1; round += 1) {
      const wanted = Math.min(next, (page + 1 - docs.length) * 2 ** round);
      const numbers = Array.from({ length: wanted }, (_, i) => next - i);
      next -= wanted;
      const found = await mapInTurns(numbers, READS_AT_ONCE, (version) =>
        this.versions.findOne({ _id: idOf(tenantId, version) }, { projection: { rules: 0 } }),
      );
      for (const doc of found) if (doc) docs.push(doc);
    }
    return { docs: docs.slice(0, page), hasMore: docs.length > page };
  }
}

const idOf = (tenantId: string, version: number): string => `${tenantId}#${version}`;
