import {
  addCounts,
  COLLECTIONS,
  dayOf,
  monotonicUlid,
  ulid,
  zeroCounts,
  type DomainEvent,
  type RuleCounts,
  type RulePrecisionDoc,
} from '@vigil/proto';
import { type ShadowVerdictDoc } from './shadow-verdicts';
import { WriteGroups } from '@vigil/proto/platform';
import type { Collection, Db } from 'mongodb';
import { Counter, type Registry } from 'prom-client';
import type { Logger } from 'pino';
import { writeCounters } from '../store/counter-writes';
import { guarded } from '../store/mongo-errors';
import type { OutboxSignal } from '../service/outbox-signal';
import {
  countsOf,
  isDegraded,
  totalsKeyOf,
  shadowHumanCounts,
  writesOf,
  type CountDelta,
  type DegradedThreshold,
  type ShadowDelta,
} from './precision-counts';

/** The stream of a rule's `RuleDegraded` event: one per tenant, rule set version and rule. */
const ruleStreamOf = (tenantId: string, ruleSetVersion: number, ruleId: string): string =>
  `rule-${tenantId}-${ruleSetVersion}-${ruleId}`;

type CounterDoc = RulePrecisionDoc & { totals?: string };

export interface RulePrecisionDeps {
  db: Db;
  log: Logger;
  /** The tenant's threshold for `rule.degraded` (its settings). */
  thresholdOf: (tenantId: string) => Promise<DegradedThreshold>;
  /** Appends events of a stream without a projection; how many went in (0: the stream already had that version). */
  append: (events: DomainEvent[]) => Promise<number>;
  /** Told of what was appended (the outbox relay). */
  outbox: OutboxSignal;
  registry?: Registry;
  /** The last shadow judgement of a record, if any (ShadowRunner's). */
  verdictOf?: (recordId: string) => Promise<ShadowVerdictDoc | null>;
  /** Whether the tenant's live rule set has shadow rules (from the tenant's cached configuration). */
  hasShadow?: (tenantId: string) => Promise<boolean>;
}

/** Counts written at most this many documents per command; a group never holds more deltas than this. */
const MAX_GROUP = 10_000;
const newUlid = monotonicUlid();

/**
 * Each rule's flags and human reviews, counted as events are committed (see precision-counts.ts), and the
 * `RuleDegraded` event of a rule whose overturn rate passes its tenant's threshold. Counts of commits made at the same
 * time go in one command (a group commit), so a flagged record costs a share of one write; a record nobody reviews
 * and no rule flagged costs none. A failed write is retried, then logged and counted; it never fails the moderation.
 */
export class RulePrecision {
  private readonly counters: Collection<CounterDoc>;
  /** This process's documents: no two writers ever update the same one. */
  private readonly writer = ulid();
  private readonly groups: WriteGroups<{ deltas: CountDelta[]; shadow: ShadowDelta[] }, undefined>;
  private readonly metrics?: { reviews: Counter<'outcome'>; degraded: Counter; failures: Counter };

  constructor(private readonly deps: RulePrecisionDeps) {
    this.counters = deps.db.collection<CounterDoc>(COLLECTIONS.rulePrecision);
    this.groups = new WriteGroups(async (groups) => {
      await this.write(
        groups.flatMap((group) => group.deltas),
        groups.flatMap((group) => group.shadow),
      );
      return groups.map(() => undefined);
    }, MAX_GROUP);
    if (deps.registry) {
      const registers = [deps.registry];
      this.metrics = {
        reviews: new Counter({
          name: 'moderator_rule_reviews_total',
          help: "Human decisions counted against the rules that flagged a record, by outcome ('confirmed', 'overturned')",
          labelNames: ['outcome'],
          registers,
        }),
        degraded: new Counter({
          name: 'moderator_rules_degraded_total',
          help: 'Rules whose overturn rate passed their tenant threshold (one rule.degraded event each)',
          registers,
        }),
        failures: new Counter({
          name: 'moderator_rule_count_failures_total',
          help: 'Groups of rule counts that could not be written after retries (those counts are missing)',
          registers,
        }),
      };
    }
  }

  async ensureIndexes(): Promise<void> {
    await guarded(() => this.counters.createIndex({ month: 1 }, { name: 'month' }));
    await guarded(() => this.counters.createIndex({ totals: 1 }, { name: 'totals' }));
  }

  /** Counts what committed `events` add; then checks the rules people reviewed against their tenant's threshold. */
  async count(events: readonly DomainEvent[]): Promise<void> {
    const deltas = countsOf(events);
    const shadow = await this.shadowReviews(events).catch((err: unknown) => {
      this.deps.log.error({ err }, 'shadow verdicts not read');
      return [];
    });
    if (deltas.length === 0 && shadow.length === 0) return;
    try {
      await this.groups.write({ deltas, shadow });
    } catch (err) {
      this.metrics?.failures.inc();
      this.deps.log.error({ err, deltas: deltas.length }, 'rule counts not written');
      return;
    }
    const reviewed = deltas.filter((delta) => delta.counts.confirmed || delta.counts.overturned);
    for (const delta of reviewed) {
      if ((delta.counts.confirmed ?? 0) > 0) this.metrics?.reviews.inc({ outcome: 'confirmed' });
      if ((delta.counts.overturned ?? 0) > 0) this.metrics?.reviews.inc({ outcome: 'overturned' });
    }
    if (reviewed.length > 0) {
      await this.checkDegraded(reviewed).catch((err: unknown) =>
        this.deps.log.error({ err }, 'degraded rules not checked'),
      );
    }
  }

  /** Adds a shadow judgement's counts (see ShadowRunner). */
  async countShadow(shadow: ShadowDelta[]): Promise<void> {
    if (shadow.length === 0) return;
    await this.groups.write({ deltas: [], shadow });
  }

  /**
   * A person's decisions on records a shadow judgement saw, compared with it: one read by `_id` per decision, and only
   * for a tenant whose rule sets have shadow rules (`hasShadow`).
   */
  private async shadowReviews(events: readonly DomainEvent[]): Promise<ShadowDelta[]> {
    const verdictOf = this.deps.verdictOf;
    if (!verdictOf) return [];
    const out: ShadowDelta[] = [];
    for (const event of events) {
      if (event.type !== 'RecordModerated' || event.data.via !== 'Manual') continue;
      if (!(await this.deps.hasShadow?.(event.tenantId))) continue;
      const verdict = await verdictOf(event.data.recordId);
      if (!verdict || verdict.tenantId !== event.tenantId) continue;
      const humanFlagged = event.data.status === 'Flagged';
      const day = dayOf(event.occurredAt);
      out.push(...shadowHumanCounts(verdict, humanFlagged, day));
      if (verdict.version)
        out.push(...shadowHumanCounts({ ...verdict.version, tenantId: verdict.tenantId }, humanFlagged, day));
    }
    return out;
  }

  /** One bulk write of `$inc` upserts on this writer's documents (see writeCounters). */
  private async write(deltas: CountDelta[], shadow: ShadowDelta[]): Promise<void> {
    await writeCounters(this.deps.db, this.counters, writesOf(deltas, this.writer, shadow));
  }

  /** A rule set version's totals for the given rules, summed over every writer's document (read by equality). */
  async totals(tenantId: string, ruleSetVersion: number): Promise<Map<string, RuleCounts>> {
    const docs = await guarded(() =>
      this.counters.find({ totals: totalsKeyOf(tenantId, ruleSetVersion) }, { projection: { rules: 1 } }).toArray(),
    );
    const totals = new Map<string, RuleCounts>();
    for (const doc of docs) {
      for (const [ruleId, counts] of Object.entries(doc.rules ?? {})) {
        totals.set(ruleId, addCounts(totals.get(ruleId) ?? zeroCounts(), counts));
      }
    }
    return totals;
  }

  private async checkDegraded(reviewed: CountDelta[]): Promise<void> {
    const versions = new Map<
      string,
      { tenantId: string; ruleSetVersion: number; delta: CountDelta; rules: Set<string> }
    >();
    for (const delta of reviewed) {
      const key = totalsKeyOf(delta.tenantId, delta.ruleSetVersion);
      const entry = versions.get(key) ?? {
        tenantId: delta.tenantId,
        ruleSetVersion: delta.ruleSetVersion,
        delta,
        rules: new Set(),
      };
      entry.rules.add(delta.ruleId);
      versions.set(key, entry);
    }
    for (const { tenantId, ruleSetVersion, delta, rules } of versions.values()) {
      const threshold = await this.deps.thresholdOf(tenantId);
      if (threshold.overturnRate === null) continue;
      const totals = await this.totals(tenantId, ruleSetVersion);
      for (const ruleId of rules) {
        const counts = totals.get(ruleId);
        if (!counts || !isDegraded(counts, threshold)) continue;
        await this.raise(tenantId, ruleSetVersion, ruleId, counts, threshold, delta.correlationId);
      }
    }
  }

  /** Appends the rule's `RuleDegraded` as version 1 of its stream: the unique `{stream, version}` makes it once. */
  private async raise(
    tenantId: string,
    ruleSetVersion: number,
    ruleId: string,
    counts: RuleCounts,
    threshold: DegradedThreshold,
    correlationId: string,
  ): Promise<void> {
    const id = newUlid(Date.now());
    const event: DomainEvent = {
      id,
      type: 'RuleDegraded',
      tenantId,
      stream: ruleStreamOf(tenantId, ruleSetVersion, ruleId),
      version: 1,
      occurredAt: new Date().toISOString(),
      correlationId,
      data: {
        ruleId,
        ruleSetVersion,
        flags: counts.flags,
        reviewed: counts.reviewed,
        confirmed: counts.confirmed,
        overturned: counts.overturned,
        overturnRate: counts.overturned / counts.reviewed,
        threshold: threshold.overturnRate ?? 0,
        minReviews: threshold.minReviews,
      },
    };
    const stored = await this.deps.append([event]);
    if (stored === 0) return;
    this.deps.outbox.appended([event]);
    this.metrics?.degraded.inc();
    this.deps.log.info({ tenantId, ruleSetVersion, ruleId }, 'rule degraded');
  }
}
