import { transparencyCountsOf, type CountTree, type DomainEvent } from '@vigil/proto';
import { parse } from 'csv-parse/sync';
import { monthsOf, transparencyCsv, transparencyReport } from './transparency-report';
import { TransparencyReportQuery } from '../routes/transparency-report/transparency-report.schema';

/** A day document built the way the moderator builds it: each event's counts added at their paths. */
function docOf(day: string, events: DomainEvent[]): { day: string; counts: CountTree } {
  const counts: CountTree = {};
  for (const event of events) {
    for (const { path, by } of transparencyCountsOf(event)) {
      let node = counts;
      for (const key of path.slice(0, -1)) node = (node[key] ??= {}) as CountTree;
      const leaf = path[path.length - 1]!;
      node[leaf] = ((node[leaf] as number | undefined) ?? 0) + by;
    }
  }
  return { day, counts };
}

const flag = (day: string, data: Record<string, unknown> = {}): DomainEvent => ({
  id: 'e',
  tenantId: 't',
  stream: 'record-r',
  version: 2,
  occurredAt: `${day}T12:00:00.000Z`,
  correlationId: 'c',
  type: 'RecordModerated',
  data: {
    recordId: 'r',
    moderationId: 'mod_1',
    status: 'Flagged',
    previousStatus: 'Compliant',
    via: 'AI',
    reasons: [],
    rules: ['spam'],
    testMode: false,
    ...data,
  },
});

describe('the transparency report', () => {
  const docs = [
    docOf('2026-01-31', [flag('2026-01-31')]),
    docOf('2026-02-01', [
      flag('2026-02-01'),
      flag('2026-02-01', {
        via: 'Manual',
        confirmsAutomated: true,
        previousStatus: 'Flagged',
        review: { rules: ['spam'], ruleSetVersion: 1, outcome: 'confirmed' },
      }),
    ]),
    // A second writer's document of the same day adds up.
    docOf('2026-02-01', [
      flag('2026-02-01', {
        via: 'Manual',
        status: 'Compliant',
        previousStatus: 'Flagged',
        review: { rules: ['spam'], ruleSetVersion: 1, outcome: 'overturned' },
      }),
    ]),
    docOf('2026-03-01', [flag('2026-03-01')]),
  ];

  it('sums the days in [from, to) over every writer, by ground, category, restriction and automation', () => {
    const report = transparencyReport(docs, { from: '2026-02-01', to: '2026-03-01' });
    expect(report.period).toEqual({ from: '2026-02-01', to: '2026-03-01', days: 28 });
    expect(report.ownInitiative).toMatchObject({
      total: 2,
      byGround: { DECISION_GROUND_INCOMPATIBLE_CONTENT: 2, DECISION_GROUND_ILLEGAL_CONTENT: 0 },
      byRestriction: expect.objectContaining({
        DECISION_VISIBILITY_CONTENT_DISABLED: 2,
        DECISION_ACCOUNT_SUSPENDED: 0,
      }),
      byAutomatedDecision: {
        AUTOMATED_DECISION_FULLY: 1,
        AUTOMATED_DECISION_PARTIALLY: 1,
        AUTOMATED_DECISION_NOT_AUTOMATED: 0,
      },
      automatedDetection: 2,
    });
    expect(report.ownInitiative.byCategory.STATEMENT_CATEGORY_OTHER_VIOLATION_TC).toBe(2);
    expect(Object.keys(report.ownInitiative.byCategory)).toHaveLength(16);
    expect(report.automatedMeans).toMatchObject({
      reviews: { reviewed: 2, confirmed: 1, overturned: 1 },
      accuracy: 0.5,
      errorRate: 0.5,
    });
    expect(report.complaints.reversals).toEqual({ total: 1, afterComplaint: 0, byModerator: 1, automatic: 0 });
    expect(report.notices.medianSecondsToDecide).toEqual({ all: null, user: null, trustedFlagger: null });
  });

  it('writes one CSV row per figure, a null as an empty value, and quotes what needs it', () => {
    const report = transparencyReport(docs, { from: '2026-01-01', to: '2027-01-01' });
    const csv = transparencyCsv(report);
    const rows = parse<Record<string, string>>(csv, { columns: true });
    const value = (section: string, measure: string, breakdown: string, key: string) =>
      rows.find(
        (row) => row.section === section && row.measure === measure && row.breakdown === breakdown && row.key === key,
      )?.value;
    expect(value('ownInitiative', 'total', '', '')).toBe('4');
    expect(value('ownInitiative', 'byAutomatedDecision', '', 'AUTOMATED_DECISION_FULLY')).toBe('3');
    expect(value('notices', 'received', 'bySource', 'user')).toBe('0');
    expect(value('notices', 'medianSecondsToDecide', '', 'all')).toBe('');
    expect(value('period', 'from', '', '')).toBe('2026-01-01');
    expect(csv.split('\r\n')[0]).toBe('section,measure,breakdown,key,value');
    // An awkward value is escaped by the library, and read back whole.
    const odd = transparencyCsv({ ...report, period: { ...report.period, from: 'a,"b"\nc' } });
    expect(parse<Record<string, string>>(odd, { columns: true })[0]!.value).toBe('a,"b"\nc');
  });

  it('reads the months a period touches, `to` excluded', () => {
    expect(monthsOf('2026-01-15', '2026-03-01')).toEqual(['2026-01', '2026-02']);
    expect(monthsOf('2025-12-31', '2026-01-02')).toEqual(['2025-12', '2026-01']);
    expect(monthsOf('2026-01-01', '2027-01-01')).toHaveLength(12);
  });

  it.each([
    [{ from: '2026-01-01', to: '2026-01-01' }, 'to'],
    [{ from: '2026-02-01', to: '2026-01-01' }, 'to'],
    [{ from: '2025-01-01', to: '2026-01-03' }, 'to'],
    [{ from: '2026-02-30', to: '2026-03-01' }, 'from'],
    [{ from: '2026-01-01' }, 'to'],
    [{ from: '2026-01-01T00:00:00Z', to: '2026-02-01' }, 'from'],
    [{ from: '2026-01-01', to: '2026-02-01', format: 'xml' }, 'format'],
  ])('refuses %j at %s', (input, path) => {
    const result = TransparencyReportQuery.safeParse(input);
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.path.join('.'))).toContain(path);
  });

  it('takes a whole leap year', () => {
    expect(TransparencyReportQuery.safeParse({ from: '2028-01-01', to: '2029-01-01' }).success).toBe(true);
  });
});
