import { monthsOf, precisionReport, windowOf } from '../domain/precision-report';
import type { PrecisionQuery, PrecisionReport } from '../routes/precision/precision.schema';
import type { RulePrecisionStore } from '../store/rule-precision-store';

/** The report of one tenant's window: the counters of its months, and the rules of the versions they name. */
export async function precisionOf(
  store: RulePrecisionStore,
  tenantId: string,
  q: PrecisionQuery,
): Promise<PrecisionReport> {
  const window = windowOf(q);
  const docs = await store.months(tenantId, monthsOf(window.from, window.to));
  const rules = await store.rulesOf(
    tenantId,
    docs.filter((doc) => q.version === undefined || doc.ruleSetVersion === q.version).map((doc) => doc.ruleSetVersion),
  );
  return precisionReport(docs, q, window, rules);
}
