import {
  AutomatedDecision,
  DecisionAccount,
  DecisionMonetary,
  DecisionVisibility,
  ReportCategory,
  ReportGround,
  type TransparencyCountsDoc,
} from '@vigil/proto';
import { flattenCounts, medianOfBuckets } from './report-counts';
import { stringify } from 'csv-stringify/sync';
import type {
  TransparencyReport,
  TransparencyReportQuery,
} from '../routes/transparency-report/transparency-report.schema';

const DAY_MS = 86_400_000;
const VOLUNTARY = 'SOURCE_VOLUNTARY';
const NOTICE_SOURCES = ['SOURCE_ARTICLE_16', 'SOURCE_TRUSTED_FLAGGER', 'SOURCE_TYPE_OTHER_NOTIFICATION'];
const RESTRICTIONS = [...DecisionVisibility.options, ...DecisionAccount.options, ...DecisionMonetary.options];
const GROUNDS = ['DECISION_GROUND_ILLEGAL_CONTENT', 'DECISION_GROUND_INCOMPATIBLE_CONTENT'];

/** The `YYYY-MM` months a period `[from, to)` touches (the counters are read a month at a time). */
export function monthsOf(from: string, to: string): string[] {
  const last = new Date(Date.parse(to) - DAY_MS).toISOString().slice(0, 7);
  const months: string[] = [];
  const cursor = new Date(`${from.slice(0, 7)}-01T00:00:00Z`);
  while (cursor.toISOString().slice(0, 7) <= last) {
    months.push(cursor.toISOString().slice(0, 7));
    cursor.setUTCMonth(cursor.getUTCMonth() + 1);
  }
  return months;
}

/** A path pattern: a fixed key, or undefined for any. */
type Pattern = ReadonlyArray<string | undefined>;

/** The counters of a period, summed over every writer's day documents, with sums by path pattern. */
class Tally {
  private readonly entries: Array<{ parts: string[]; value: number }>;

  constructor(flat: ReadonlyMap<string, number>) {
    this.entries = [...flat].map(([path, value]) => ({ parts: path.split('.'), value }));
  }

  private matching(pattern: Pattern) {
    return this.entries.filter(({ parts }) => pattern.every((key, index) => key === undefined || parts[index] === key));
  }

  sum(...pattern: Pattern): number {
    return this.matching(pattern).reduce((total, { value }) => total + value, 0);
  }

  /** Sums by the key at `index` of the paths that match; `keys` are listed even when zero. */
  by(pattern: Pattern, index: number, keys: readonly string[] = []): Record<string, number> {
    const out: Record<string, number> = Object.fromEntries(keys.map((key) => [key, 0]));
    for (const { parts, value } of this.matching(pattern)) {
      const key = parts[index];
      if (key !== undefined) out[key] = (out[key] ?? 0) + value;
    }
    return out;
  }

  median(...pattern: Pattern): number | null {
    const buckets = this.by(pattern, pattern.length);
    return medianOfBuckets(new Map(Object.entries(buckets)));
  }
}

/** Kinds of complaint, listed even at zero: users' appeals, reporters' complaints about no action. */
const COMPLAINT_KINDS = ['appeal', 'report'] as const;

const minus = (all: Record<string, number>, part: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(all).map(([key, value]) => [key, value - (part[key] ?? 0)]));

/** The report of a period from its counters' documents (documents of other days are left out here). */
export function transparencyReport(
  docs: readonly Pick<TransparencyCountsDoc, 'day' | 'counts'>[],
  period: Pick<TransparencyReportQuery, 'from' | 'to'>,
): TransparencyReport {
  const flat = new Map<string, number>();
  for (const doc of docs) {
    if (doc.day < period.from || doc.day >= period.to) continue;
    flattenCounts(doc.counts, flat);
  }
  const t = new Tally(flat);
  const categories = ReportCategory.options;
  const automations = AutomatedDecision.options;

  const allDecisions = t.by(['decisions'], 4, automations);
  const ownByAutomation = t.by(['decisions', VOLUNTARY], 4, automations);
  const noticeByAutomation = minus(allDecisions, ownByAutomation);
  const noticeRestrictions = minus(
    t.by(['restrictions'], 2, RESTRICTIONS),
    t.by(['restrictions', VOLUNTARY], 2, RESTRICTIONS),
  );
  const reviews = {
    reviewed: t.sum('reviews', 'reviewed'),
    confirmed: t.sum('reviews', 'confirmed'),
    overturned: t.sum('reviews', 'overturned'),
  };
  const upheld = t.sum('complaints', 'decided', undefined, 'upheld');
  const reversed = t.sum('complaints', 'decided', undefined, 'reversed');
  const reversals = {
    afterComplaint: t.sum('reversals', 'appeal'),
    byModerator: t.sum('reversals', 'manual'),
    automatic: t.sum('reversals', 'automatic'),
  };
  const ownTotal = t.sum('decisions', VOLUNTARY);
  const allTotal = t.sum('decisions');
  return {
    period: {
      from: period.from,
      to: period.to,
      days: Math.round((Date.parse(period.to) - Date.parse(period.from)) / DAY_MS),
    },
    notices: {
      received: {
        total: t.sum('notices', 'received'),
        bySource: {
          user: t.sum('notices', 'received', 'user'),
          trustedFlagger: t.sum('notices', 'received', 'trusted_flagger'),
        },
        byGround: t.by(['notices', 'received'], 3, ReportGround.options),
        byCategory: t.by(['notices', 'received'], 4, categories),
      },
      decided: {
        total: t.sum('notices', 'decided'),
        actioned: t.sum('notices', 'decided', undefined, undefined, 'Actioned'),
        noAction: t.sum('notices', 'decided', undefined, undefined, 'NoAction'),
        bySource: {
          user: t.sum('notices', 'decided', 'user'),
          trustedFlagger: t.sum('notices', 'decided', 'trusted_flagger'),
        },
        byCategory: t.by(['notices', 'decided'], 3, categories),
        actionedByCategory: t.by(['notices', 'decided', undefined, undefined, 'Actioned'], 3, categories),
      },
      medianSecondsToDecide: {
        all: t.median('notices', 'time', undefined),
        user: t.median('notices', 'time', 'user'),
        trustedFlagger: t.median('notices', 'time', 'trusted_flagger'),
      },
      actions: {
        total: allTotal - ownTotal,
        bySource: Object.fromEntries(NOTICE_SOURCES.map((source) => [source, t.sum('decisions', source)])),
        byRestriction: noticeRestrictions,
        byAutomatedDecision: noticeByAutomation,
      },
    },
    ownInitiative: {
      total: ownTotal,
      byGround: t.by(['decisions', VOLUNTARY], 2, GROUNDS),
      byCategory: t.by(['decisions', VOLUNTARY], 3, categories),
      byRestriction: t.by(['restrictions', VOLUNTARY], 2, RESTRICTIONS),
      byAutomatedDecision: ownByAutomation,
      automatedDetection: ownTotal - (ownByAutomation.AUTOMATED_DECISION_NOT_AUTOMATED ?? 0),
    },
    complaints: {
      received: {
        total: t.sum('complaints', 'received'),
        byKind: t.by(['complaints', 'received'], 2, COMPLAINT_KINDS),
      },
      decided: {
        total: upheld + reversed,
        upheld,
        reversed,
        byKind: t.by(['complaints', 'decided'], 2, COMPLAINT_KINDS),
      },
      medianSecondsToDecide: t.median('complaints', 'time', undefined),
      reversals: { total: reversals.afterComplaint + reversals.byModerator + reversals.automatic, ...reversals },
    },
    automatedMeans: {
      byAutomatedDecision: allDecisions,
      automatedDetection: allTotal - (allDecisions.AUTOMATED_DECISION_NOT_AUTOMATED ?? 0),
      reviews,
      accuracy: reviews.reviewed > 0 ? reviews.confirmed / reviews.reviewed : null,
      errorRate: reviews.reviewed > 0 ? reviews.overturned / reviews.reviewed : null,
    },
  };
}

const CSV_HEADER = ['section', 'measure', 'breakdown', 'key', 'value'] as const;

/**
 * The report as CSV (RFC 4180, by csv-stringify): one row per figure, `section,measure,breakdown,key,value`, in the
 * JSON's order, e.g. `notices,received,byCategory,STATEMENT_CATEGORY_VIOLENCE,3`. A null figure is an empty value.
 */
export function transparencyCsv(report: TransparencyReport): string {
  const rows: Array<Array<string | number>> = [];
  const walk = (value: unknown, path: string[]) => {
    if (value !== null && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) walk(inner, [...path, key]);
      return;
    }
    const [section = '', measure = '', ...rest] = path;
    const key = rest.length > 0 ? rest[rest.length - 1]! : '';
    const breakdown = rest.slice(0, -1).join('.');
    rows.push([section, measure, breakdown, key, value === null ? '' : (value as string | number)]);
  };
  walk(report, []);
  return stringify([[...CSV_HEADER], ...rows], { record_delimiter: 'windows' });
}

/** The CSV's file name, for a download. */
export const csvFileName = (period: Pick<TransparencyReportQuery, 'from' | 'to'>): string =>
  `transparency-report-${period.from}-${period.to}.csv`;
