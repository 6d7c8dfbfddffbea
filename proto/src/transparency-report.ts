import { decodeTime, isValid } from 'ulid';
import type { DomainEvent } from './events';
import { dayOf, monthKeyOf, reviewOf } from './rule-precision';
import { isRestriction, statementOf } from './statements';

/**
 * The transparency report's counters (collection `transparency_counts`, docs/dsa.md, "Transparency report"). The
 * moderator adds to them as it commits events; the gateway sums a period's documents into the report. Nothing scans
 * records or events to answer a report.
 *
 * One document per tenant, UTC day and writing process (`_id` = `<tenantId>|<YYYY-MM-DD>|<writer>`): no two processes
 * update one document, since on FerretDB v1 an update reads then writes and racing `$inc`s would lose counts. `month`
 * (`<tenantId>|<YYYY-MM>`) is the equality the gateway reads a period by: the only kind of filter FerretDB v1 serves
 * from an index.
 *
 * `counts` is a tree of counters addressed by paths (see `transparencyCountsOf`); every key is an enumeration value, a
 * fixed word or a time bucket, never free text, so it is a safe field name.
 */
export interface TransparencyCountsDoc {
  _id: string;
  tenantId: string;
  /** `YYYY-MM-DD` (UTC). */
  day: string;
  month: string;
  counts: CountTree;
}

export interface CountTree {
  [key: string]: number | CountTree;
}

/** One counter to add to: the day it counts on and its path in `counts`. */
export interface TransparencyCount {
  day: string;
  path: string[];
  by: number;
}

export const transparencyMonthKey = monthKeyOf;

/**
 * A duration's bucket: whole seconds to two significant figures (59 s, 590 s, 5,900 s …), as `t<seconds>`. A median
 * taken over buckets is within 10 % of the exact one, and a day's document holds at most a few hundred buckets.
 */
export function timeBucketOf(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 100) return `t${seconds}`;
  const scale = 10 ** (Math.floor(Math.log10(seconds)) - 1);
  return `t${Math.floor(seconds / scale) * scale}`;
}

/** When an id of the form `<prefix>_<ULID>` was made (reports and appeals: when they were received); null otherwise. */
export function timeOfId(id: string): number | null {
  const ulid = id.slice(id.indexOf('_') + 1);
  return isValid(ulid) ? decodeTime(ulid) : null;
}

/** How a lifted restriction came to be lifted: an appeal granted, a person's decision, or automation. */
function triggerOf(via: string): 'appeal' | 'manual' | 'automatic' {
  if (via === 'Automation Appeal Approved') return 'appeal';
  return via === 'Manual' ? 'manual' : 'automatic';
}

interface Complaint {
  kind: string;
  /** When the complaint was received (epoch ms), for a decided one; null when unknown. */
  receivedAt: number | null;
  /** Absent: received. `upheld`: the decision complained of stands; `reversed`: it was undone. */
  outcome?: 'upheld' | 'reversed';
}

/**
 * The complaint (Art. 20 DSA) an event receives or decides, by kind: a user's appeal against a restriction of their
 * account (`appeal`), or a reporter's complaint about a decision not to act (`report`). A new kind is one more case.
 */
function complaintOf(event: DomainEvent): Complaint | null {
  switch (event.type) {
    case 'AppealCreated':
      return { kind: 'appeal', receivedAt: null };
    case 'AppealDecided':
      if (event.data.status === 'Open') return null;
      return {
        kind: 'appeal',
        receivedAt: timeOfId(event.data.appealId),
        outcome: event.data.status === 'Approved' ? 'reversed' : 'upheld',
      };
    case 'ReportComplaintFiled':
      return { kind: 'report', receivedAt: null };
    case 'ReportComplaintDecided':
      // Upheld: the decision not to act is undone (the target is acted on); Rejected: it stands.
      return {
        kind: 'report',
        receivedAt: timeOfId(event.data.complaintId),
        outcome: event.data.outcome === 'Upheld' ? 'reversed' : 'upheld',
      };
    default:
      return null;
  }
}

/**
 * The counters an event adds to (all on the UTC day it occurred). Pure, so whichever process commits an event counts
 * it the same way. Paths:
 * - `notices.received.<reporter type>.<ground>.<category>`: reports received (user or trusted flagger);
 * - `notices.decided.<reporter type>.<category>.<outcome>` and `notices.time.<reporter type>.<bucket>`: reports decided
 *   (Actioned or NoAction), and the time from receipt to decision;
 * - `decisions.<source>.<ground>.<category>.<automated decision>`: restrictions imposed, one per statement of reasons;
 * - `restrictions.<source>.<restriction>.<automated decision>`: each restriction a statement names (a suspension with
 *   payouts paused names two);
 * - `reversals.<appeal|manual|automatic>`: restrictions lifted;
 * - `complaints.received.<kind>`, `complaints.decided.<kind>.<upheld|reversed>`, `complaints.time.<kind>.<bucket>`;
 * - `reviews.<reviewed|confirmed|overturned>`: people's decisions on automated flags (a changed decision moves its
 *   count from one outcome to the other).
 * Test-mode decisions restrict nothing and count nowhere, as they have no statement.
 */
export function transparencyCountsOf(event: DomainEvent): TransparencyCount[] {
  const day = dayOf(event.occurredAt);
  const counts: TransparencyCount[] = [];
  const add = (by: number, ...path: string[]) => counts.push({ day, path, by });
  if (event.type === 'ReportReceived') {
    const { data } = event;
    add(1, 'notices', 'received', data.reporter.type, data.ground, data.category);
  } else if (event.type === 'ReportDecided') {
    const { data } = event;
    add(1, 'notices', 'decided', data.reporter.type, data.category, data.outcome);
    const receivedAt = timeOfId(data.reportId);
    if (receivedAt !== null) {
      const elapsed = Date.parse(event.occurredAt) - receivedAt;
      add(1, 'notices', 'time', data.reporter.type, timeBucketOf(elapsed));
    }
  }
  const statement = statementOf(event, { appealWindowDays: 0 });
  if (statement && isRestriction(statement)) {
    const automation = statement.automatedDecision;
    add(1, 'decisions', statement.source, statement.ground, statement.category, automation);
    const { visibility, account, monetary } = statement.restriction;
    for (const restriction of [...(visibility ?? []), account, monetary]) {
      if (restriction) add(1, 'restrictions', statement.source, restriction, automation);
    }
  } else if (statement?.kind === 'reversal') {
    add(1, 'reversals', triggerOf(statement.via));
  }
  const complaint = complaintOf(event);
  if (complaint) {
    if (!complaint.outcome) add(1, 'complaints', 'received', complaint.kind);
    else {
      add(1, 'complaints', 'decided', complaint.kind, complaint.outcome);
      if (complaint.receivedAt !== null) {
        add(1, 'complaints', 'time', complaint.kind, timeBucketOf(Date.parse(event.occurredAt) - complaint.receivedAt));
      }
    }
  }
  const review = reviewOf(event);
  if (review && review.previous !== review.outcome) {
    add(1, 'reviews', review.outcome);
    if (review.previous === undefined) add(1, 'reviews', 'reviewed');
    else add(-1, 'reviews', review.previous);
  }
  return counts;
}
