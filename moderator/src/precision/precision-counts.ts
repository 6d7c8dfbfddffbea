import {
  dayOf,
  monthKeyOf,
  reviewOf,
  RULE_COUNT_FIELDS,
  SHADOW_COUNT_FIELDS,
  type DomainEvent,
  type ShadowCounts,
  type RuleCounts,
  type RuleReview,
  type TenantSettings,
} from '@vigil/proto';
import { type ShadowVerdictDoc } from './shadow-verdicts';
import type { CounterWrite as CounterWrites } from '../store/counter-writes';

const precisionDocId = (tenantId: string, ruleSetVersion: number, day: string): string =>
  `${tenantId}|${ruleSetVersion}|${day}`;

/** What one committed event adds to one rule's counters on one day. */
export interface CountDelta {
  tenantId: string;
  ruleSetVersion: number;
  ruleId: string;
  /** `YYYY-MM-DD` (UTC) of the event. */
  day: string;
  counts: Partial<RuleCounts>;
  /** The event that caused it: a degraded rule's event names its correlation. */
  correlationId: string;
}

/** What one shadow judgement (or a person's decision on a record one judged) adds to a shadow rule's counters. */
export interface ShadowDelta {
  tenantId: string;
  ruleSetVersion: number;
  ruleId: string;
  day: string;
  counts: Partial<ShadowCounts>;
}

type ShadowSeen = Pick<ShadowVerdictDoc, 'tenantId' | 'ruleSetVersion' | 'ran' | 'flagged'>;

/** One delta per shadow rule that ran on the day, its counts from whether that rule would have flagged. */
function perShadowRule(verdict: ShadowSeen, day: string, counts: (would: boolean) => ShadowDelta['counts']) {
  const flagged = new Set(verdict.flagged);
  return verdict.ran.map((ruleId): ShadowDelta => ({
    tenantId: verdict.tenantId,
    ruleSetVersion: verdict.ruleSetVersion,
    ruleId,
    day,
    counts: counts(flagged.has(ruleId)),
  }));
}

/** A shadow judgement's counts: each shadow rule ran, maybe would have flagged, and agreed with the live result or not. */
export function shadowRunCounts(verdict: ShadowSeen, liveFlagged: boolean, day: string): ShadowDelta[] {
  return perShadowRule(verdict, day, (would) => ({
    runs: 1,
    ...(would ? { wouldFlag: 1 } : {}),
    [would === liveFlagged ? 'agreeLive' : 'disagreeLive']: 1,
  }));
}

/** A person's decision on a record a shadow judgement saw: each shadow rule that ran agreed with it or not. */
export function shadowHumanCounts(verdict: ShadowSeen, humanFlagged: boolean, day: string): ShadowDelta[] {
  return perShadowRule(verdict, day, (would) => ({
    [would === humanFlagged ? 'agreeHuman' : 'disagreeHuman']: 1,
  }));
}

/** A review's changes: one more reviewed flag, or a changed decision moving one count to the other. */
function reviewCounts(review: RuleReview): Partial<RuleCounts> {
  const counts: Partial<RuleCounts> = { [review.outcome]: 1 };
  if (review.previous === undefined) counts.reviewed = 1;
  else if (review.previous !== review.outcome) counts[review.previous] = -1;
  return counts;
}

/**
 * The counter changes of committed events: every rule an automatic moderation matched gets a flag (test mode too: the
 * rule flagged); every review a person's decision carries adds to the rules it judged. Pure, so a commit's counts are
 * the same whoever computes them.
 */
export function countsOf(events: readonly DomainEvent[]): CountDelta[] {
  const deltas: CountDelta[] = [];
  for (const event of events) {
    const base = { tenantId: event.tenantId, day: dayOf(event.occurredAt), correlationId: event.correlationId };
    if (event.type === 'RecordModerated' && event.data.via !== 'Manual') {
      const ruleSetVersion = event.data.ruleSetVersion ?? 0;
      for (const ruleId of new Set(event.data.rules))
        deltas.push({ ...base, ruleSetVersion, ruleId, counts: { flags: 1 } });
      continue;
    }
    const review = reviewOf(event);
    if (!review || review.previous === review.outcome) continue;
    const counts = reviewCounts(review);
    for (const ruleId of new Set(review.rules)) {
      deltas.push({ ...base, ruleSetVersion: review.ruleSetVersion, ruleId, counts });
    }
  }
  return deltas;
}

/** One counter document's update: `$inc` by dotted path, and what an upsert creates it with. */
export type CounterWrite = CounterWrites<{
  tenantId: string;
  ruleSetVersion: number;
  day: string;
  month?: string;
  totals?: string;
}>;

/** The key of a version's totals documents (one per writer), which the degraded check reads by equality. */
export const totalsKeyOf = (tenantId: string, ruleSetVersion: number): string => `${tenantId}|${ruleSetVersion}`;

/**
 * The writes of a group of deltas, merged per document: each day's document and the version's totals document of
 * `writer` (each writer has documents of its own, so no two processes ever update one document: on FerretDB v1 an
 * update reads then writes, and racing `$inc`s would lose counts).
 */
export function writesOf(
  deltas: readonly CountDelta[],
  writer: string,
  shadow: readonly ShadowDelta[] = [],
): CounterWrite[] {
  const writes = new Map<string, CounterWrite>();
  const add = (
    id: string,
    setOnInsert: CounterWrite['setOnInsert'],
    ruleId: string,
    counts: Partial<Record<string, number>>,
    section: 'rules' | 'shadow' = 'rules',
  ) => {
    let write = writes.get(id);
    if (!write) {
      write = { _id: id, inc: {}, setOnInsert };
      writes.set(id, write);
    }
    for (const field of section === 'rules' ? RULE_COUNT_FIELDS : SHADOW_COUNT_FIELDS) {
      const by = counts[field];
      if (!by) continue;
      const path = `${section}.${ruleId}.${field}`;
      write.inc[path] = (write.inc[path] ?? 0) + by;
    }
  };
  /** A delta's day document of this writer: its id and what an insert sets. */
  const dayDoc = ({ tenantId, ruleSetVersion, day }: CountDelta | ShadowDelta) =>
    [
      `${precisionDocId(tenantId, ruleSetVersion, day)}|${writer}`,
      { tenantId, ruleSetVersion, day, month: monthKeyOf(tenantId, day) },
    ] as const;
  for (const delta of shadow) add(...dayDoc(delta), delta.ruleId, delta.counts, 'shadow');
  for (const delta of deltas) {
    const { tenantId, ruleSetVersion } = delta;
    add(...dayDoc(delta), delta.ruleId, delta.counts);
    add(
      `${precisionDocId(tenantId, ruleSetVersion, 'all')}|${writer}`,
      { tenantId, ruleSetVersion, day: 'all', totals: totalsKeyOf(tenantId, ruleSetVersion) },
      delta.ruleId,
      delta.counts,
    );
  }
  return [...writes.values()].filter((write) => Object.values(write.inc).some((by) => by !== 0));
}

export interface DegradedThreshold {
  /** Null: the tenant raises no `rule.degraded`. */
  overturnRate: number | null;
  minReviews: number;
}

/** Whether a rule's totals under one version pass the tenant's threshold. */
export function isDegraded(counts: RuleCounts, threshold: DegradedThreshold): boolean {
  if (threshold.overturnRate === null || counts.reviewed < threshold.minReviews || counts.reviewed <= 0) return false;
  return counts.overturned / counts.reviewed >= threshold.overturnRate;
}

/** A tenant's threshold, from its settings. */
export function thresholdOf(settings: TenantSettings): DegradedThreshold {
  return { overturnRate: settings.ruleDegradedOverturnRate, minReviews: settings.ruleDegradedMinReviews };
}
