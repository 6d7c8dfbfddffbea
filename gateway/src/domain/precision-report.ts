import {
  addCounts,
  SHADOW_COUNT_FIELDS,
  zeroCounts,
  type RuleCounts,
  type RulePrecisionDoc,
  type ShadowCounts,
} from '@vigil/proto';
import { type Rule } from '@vigil/proto/rules';
import { DEFAULT_WINDOW_DAYS, type PrecisionQuery, type PrecisionReport } from '../routes/precision/precision.schema';

const zeroShadowCounts = (): ShadowCounts => ({
  runs: 0,
  wouldFlag: 0,
  agreeLive: 0,
  disagreeLive: 0,
  agreeHuman: 0,
  disagreeHuman: 0,
});

/** Precision (confirmed ÷ reviewed) and overturn rate; null until something was reviewed. */
function ratesOf(counts: RuleCounts): { precision: number | null; overturnRate: number | null } {
  if (counts.reviewed <= 0) return { precision: null, overturnRate: null };
  return { precision: counts.confirmed / counts.reviewed, overturnRate: counts.overturned / counts.reviewed };
}

/** Rows at most in one report (a tenant's versions in a window times their rules). */
const MAX_ROWS = 500;

const DAY_MS = 86_400_000;
const dayText = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** The window asked for, with its defaults: `to` today (UTC), `from` 29 days before it. */
export function windowOf(query: Pick<PrecisionQuery, 'from' | 'to'>, now = new Date()): { from: string; to: string } {
  const to = query.to ?? dayText(now.getTime());
  const from = query.from ?? dayText(Date.parse(to) - (DEFAULT_WINDOW_DAYS - 1) * DAY_MS);
  return { from, to };
}

/** The `YYYY-MM` months the window touches (the counters are read a month at a time). */
export function monthsOf(from: string, to: string): string[] {
  const months: string[] = [];
  const cursor = new Date(`${from.slice(0, 7)}-01T00:00:00Z`);
  while (cursor.toISOString().slice(0, 7) <= to.slice(0, 7)) {
    months.push(cursor.toISOString().slice(0, 7));
    cursor.setUTCMonth(cursor.getUTCMonth() + 1);
  }
  return months;
}

const withRates = (counts: RuleCounts) => ({ ...counts, ...ratesOf(counts) });

/**
 * The report of the day counters of a window (every writer's documents; other days and versions are left out here):
 * per rule and version, per preset of prompt rules, and per day. `rulesOf` holds the versions' rules, for names and
 * presets.
 */
export function precisionReport(
  docs: readonly RulePrecisionDoc[],
  query: PrecisionQuery,
  window: { from: string; to: string },
  rulesOf: ReadonlyMap<number, readonly Rule[]>,
): PrecisionReport {
  const rows = new Map<string, { ruleId: string; ruleSetVersion: number; counts: RuleCounts }>();
  const shadowRows = new Map<string, { ruleId: string; ruleSetVersion: number; counts: ShadowCounts }>();
  const days = new Map<string, RuleCounts>();
  for (const doc of docs) {
    if (doc.day === 'all' || doc.day < window.from || doc.day > window.to) continue;
    if (query.version !== undefined && doc.ruleSetVersion !== query.version) continue;
    for (const [ruleId, counts] of Object.entries(doc.shadow ?? {})) {
      if (query.rule !== undefined && ruleId !== query.rule) continue;
      const key = `${doc.ruleSetVersion}|${ruleId}`;
      const row = shadowRows.get(key) ?? { ruleId, ruleSetVersion: doc.ruleSetVersion, counts: zeroShadowCounts() };
      for (const field of SHADOW_COUNT_FIELDS) row.counts[field] += counts[field] ?? 0;
      shadowRows.set(key, row);
    }
    for (const [ruleId, counts] of Object.entries(doc.rules ?? {})) {
      if (query.rule !== undefined && ruleId !== query.rule) continue;
      const key = `${doc.ruleSetVersion}|${ruleId}`;
      const row = rows.get(key) ?? { ruleId, ruleSetVersion: doc.ruleSetVersion, counts: zeroCounts() };
      addCounts(row.counts, counts);
      rows.set(key, row);
      days.set(doc.day, addCounts(days.get(doc.day) ?? zeroCounts(), counts));
    }
  }
  const ordered = [...rows.values()].sort(
    (a, b) =>
      b.counts.flags - a.counts.flags || b.ruleSetVersion - a.ruleSetVersion || a.ruleId.localeCompare(b.ruleId),
  );
  const kept = ordered.slice(0, MAX_ROWS);
  const presets = new Map<string, { presetId: string; ruleSetVersion: number; counts: RuleCounts }>();
  const ruleRows = kept.map((row) => {
    const rule = rulesOf.get(row.ruleSetVersion)?.find((candidate) => candidate.id === row.ruleId);
    const presetId = rule && isPromptRule(rule) ? rule.presetId : undefined;
    if (presetId) {
      const key = `${row.ruleSetVersion}|${presetId}`;
      const preset = presets.get(key) ?? { presetId, ruleSetVersion: row.ruleSetVersion, counts: zeroCounts() };
      addCounts(preset.counts, row.counts);
      presets.set(key, preset);
    }
    return {
      ruleId: row.ruleId,
      ruleSetVersion: row.ruleSetVersion,
      ...(rule ? { name: rule.name } : {}),
      ...(presetId ? { presetId } : {}),
      ...withRates(row.counts),
    };
  });
  return {
    from: window.from,
    to: window.to,
    rules: ruleRows,
    presets: [...presets.values()].map((preset) => ({
      presetId: preset.presetId,
      ruleSetVersion: preset.ruleSetVersion,
      ...withRates(preset.counts),
    })),
    series: [...days.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([day, counts]) => ({ day, ...withRates(counts) })),
    shadow: [...shadowRows.values()]
      .sort((a, b) => b.counts.runs - a.counts.runs || b.ruleSetVersion - a.ruleSetVersion)
      .slice(0, MAX_ROWS)
      .map((row) => ({ ruleId: row.ruleId, ruleSetVersion: row.ruleSetVersion, ...row.counts })),
    truncated: ordered.length > kept.length || shadowRows.size > MAX_ROWS,
  };
}

const isPromptRule = (rule: Rule): boolean => rule.strategies.some((strategy) => strategy.type === 'prompt');
