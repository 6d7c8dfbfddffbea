import type { DomainEvent, RuleReview } from './events';

/**
 * Per-rule counters of flags and human reviews (collection `rule_precision`). The moderator adds to them as it commits
 * events; the gateway reads them. Nothing scans records or events to answer a question about precision.
 *
 * One document per tenant, rule set version and UTC day (`_id` = `<tenantId>|<version>|<YYYY-MM-DD>`), and one with
 * the version's totals (`_id` = `<tenantId>|<version>|all`). Rule ids are `[a-z0-9_-]`, so they are safe field names.
 * `month` (`<tenantId>|<YYYY-MM>`) is the equality the gateway reads a window by: on FerretDB v1 only an equality on
 * a top-level field reaches an index, and a month holds at most 31 days per version.
 */
export interface RuleCounts {
  /** Automatic moderations the rule flagged. */
  flags: number;
  /** Human decisions on its flags (a changed decision moves from one outcome to the other, and counts once). */
  reviewed: number;
  confirmed: number;
  overturned: number;
}

/** A shadow rule's counts (docs/rules-safely.md, "Shadow rules"). */
export interface ShadowCounts {
  /** Records the shadow rule judged. */
  runs: number;
  /** Of those, the ones it would have flagged. */
  wouldFlag: number;
  /** Its verdict was the live result's (flagged and Flagged, or not and Compliant). */
  agreeLive: number;
  disagreeLive: number;
  /** A person's later decision on the record matched its verdict, or not. */
  agreeHuman: number;
  disagreeHuman: number;
}

export const SHADOW_COUNT_FIELDS = [
  'runs',
  'wouldFlag',
  'agreeLive',
  'disagreeLive',
  'agreeHuman',
  'disagreeHuman',
] as const;

export interface RulePrecisionDoc {
  _id: string;
  tenantId: string;
  ruleSetVersion: number;
  /** `YYYY-MM-DD` (UTC), or `all` for the totals document. */
  day: string;
  /** `<tenantId>|<YYYY-MM>`; absent on the totals document. */
  month?: string;
  rules: Record<string, Partial<RuleCounts>>;
  /** Shadow rules' counts, by rule id. */
  shadow?: Record<string, Partial<ShadowCounts>>;
}

export const RULE_COUNT_FIELDS = ['flags', 'reviewed', 'confirmed', 'overturned'] as const;

export const dayOf = (at: Date | string): string => new Date(at).toISOString().slice(0, 10);
export const monthKeyOf = (tenantId: string, day: string): string => `${tenantId}|${day.slice(0, 7)}`;

/**
 * The review an event carries: a person's decision on a record or user whose standing flag came from rules (a manual
 * moderation, a status change, an appeal's decision). Precision counts it, and so does the transparency report.
 */
export function reviewOf(event: DomainEvent): RuleReview | undefined {
  switch (event.type) {
    case 'RecordModerated':
      return event.data.via === 'Manual' ? event.data.review : undefined;
    case 'UserStatusChanged':
    case 'AppealDecided':
      return event.data.review;
    default:
      return undefined;
  }
}

export const zeroCounts = (): RuleCounts => ({ flags: 0, reviewed: 0, confirmed: 0, overturned: 0 });

/** Adds `more` into `into` (missing fields count 0). */
export function addCounts(into: RuleCounts, more: Partial<RuleCounts>): RuleCounts {
  for (const field of RULE_COUNT_FIELDS) into[field] += more[field] ?? 0;
  return into;
}
