import { COLLECTIONS, type RulePrecisionDoc } from '@vigil/proto';
import { DEFAULT_RULES, type Rule } from '@vigil/proto/rules';
import type { Collection, Db } from 'mongodb';
import type { RuleVersionStore } from './rule-version-store';

/** Rule set versions whose rules a report reads at most (for names and presets); the others show ids only. */
const MAX_VERSIONS_READ = 50;

/**
 * Reads the rule counters the moderator writes (`rule_precision`, see proto's rule-precision.ts). A window is read a
 * month at a time by the `month` field, an equality the store serves from its index: never the records or events.
 */
export class RulePrecisionStore {
  private readonly counters: Collection<RulePrecisionDoc>;

  constructor(
    db: Db,
    private readonly versions: RuleVersionStore,
  ) {
    this.counters = db.collection(COLLECTIONS.rulePrecision);
  }

  /** Every writer's day documents of the tenant in the given `YYYY-MM` months. */
  async months(tenantId: string, months: readonly string[]): Promise<RulePrecisionDoc[]> {
    const found = await Promise.all(
      months.map((month) => this.counters.find({ month: `${tenantId}|${month}` }).toArray()),
    );
    return found.flat();
  }

  /** The rules of each version named (version 0: the default set); the newest `MAX_VERSIONS_READ` of them. */
  async rulesOf(tenantId: string, versions: Iterable<number>): Promise<Map<number, Rule[]>> {
    const wanted = [...new Set(versions)].sort((a, b) => b - a).slice(0, MAX_VERSIONS_READ);
    const entries = await Promise.all(
      wanted.map(async (version): Promise<[number, Rule[]]> => {
        if (version === 0) return [0, DEFAULT_RULES.rules];
        const doc = await this.versions.get(tenantId, version);
        return [version, doc?.rules ?? []];
      }),
    );
    return new Map(entries);
  }
}
