import type { RulePrecisionDoc } from '@vigil/proto';
import type { Rule } from '@vigil/proto/rules';
import { monthsOf, precisionReport, windowOf } from './precision-report';
import { PrecisionQuery } from '../routes/precision/precision.schema';

const doc = (
  day: string,
  ruleSetVersion: number,
  rules: RulePrecisionDoc['rules'],
  writer = 'w1',
): RulePrecisionDoc => ({
  _id: `t|${ruleSetVersion}|${day}|${writer}`,
  tenantId: 't',
  ruleSetVersion,
  day,
  month: `t|${day.slice(0, 7)}`,
  rules,
});
const prompt = (id: string, presetId?: string): Rule => ({
  id,
  name: `Rule ${id}`,
  enabled: true,
  entities: [],
  strategies: [{ type: 'prompt', topic: 'scams', prompt: 'Is this a scam?' }] as Rule['strategies'],
  ...(presetId ? { presetId, presetVersion: 1 } : {}),
});

/** The counts and rates of one flag that no one reviewed. */
const FLAGGED_ONCE_UNREVIEWED = {
  flags: 1,
  reviewed: 0,
  confirmed: 0,
  overturned: 0,
  precision: null,
  overturnRate: null,
};

describe('precision report', () => {
  const docs = [
    doc('2026-03-01', 2, { spam: { flags: 4, reviewed: 2, confirmed: 1, overturned: 1 }, scam: { flags: 1 } }),
    doc('2026-03-01', 2, { spam: { flags: 1, reviewed: 2, confirmed: 2 } }, 'w2'),
    doc('2026-03-02', 3, { spam: { flags: 2, reviewed: 1, overturned: 1 } }),
    doc('2026-02-27', 2, { spam: { flags: 9 } }),
  ];
  const rules = new Map([[2, [prompt('spam'), prompt('scam', 'scams')]]]);

  it('sums every writer per rule and version over the window, with rates, most flags first', () => {
    const report = precisionReport(docs, {}, { from: '2026-03-01', to: '2026-03-31' }, rules);
    expect(report.rules).toEqual([
      {
        ruleId: 'spam',
        ruleSetVersion: 2,
        name: 'Rule spam',
        flags: 5,
        reviewed: 4,
        confirmed: 3,
        overturned: 1,
        precision: 0.75,
        overturnRate: 0.25,
      },
      {
        ruleId: 'spam',
        ruleSetVersion: 3,
        flags: 2,
        reviewed: 1,
        confirmed: 0,
        overturned: 1,
        precision: 0,
        overturnRate: 1,
      },
      {
        ruleId: 'scam',
        ruleSetVersion: 2,
        name: 'Rule scam',
        presetId: 'scams',
        ...FLAGGED_ONCE_UNREVIEWED,
      },
    ]);
    expect(report.presets).toEqual([
      {
        presetId: 'scams',
        ruleSetVersion: 2,
        ...FLAGGED_ONCE_UNREVIEWED,
      },
    ]);
    expect(report.series.map((point) => [point.day, point.flags, point.precision])).toEqual([
      ['2026-03-01', 6, 0.75],
      ['2026-03-02', 2, 0],
    ]);
    expect(report.truncated).toBe(false);
  });

  it('keeps to one rule and one version when asked', () => {
    const report = precisionReport(docs, { rule: 'spam', version: 3 }, { from: '2026-02-01', to: '2026-03-31' }, rules);
    expect(report.rules.map((row) => [row.ruleId, row.ruleSetVersion, row.flags])).toEqual([['spam', 3, 2]]);
  });

  it('defaults to the last 30 days and reads each month the window touches', () => {
    expect(windowOf({}, new Date('2026-03-10T12:00:00Z'))).toEqual({ from: '2026-02-09', to: '2026-03-10' });
    expect(monthsOf('2025-12-30', '2026-02-01')).toEqual(['2025-12', '2026-01', '2026-02']);
  });

  it.each([
    [{ from: '2026-03-02', to: '2026-03-01' }, '`from` is after `to`'],
    [{ from: '2026-01-01', to: '2026-06-01' }, 'the window is at most 92 days'],
    [{ from: '2026-02-30' }, 'not a calendar day'],
    [{ rule: 'Not An Id' }, 'a rule id'],
  ])('refuses %j', (query, message) => {
    const parsed = PrecisionQuery.safeParse(query);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((issue) => issue.message)).toContain(message);
  });
});
