import type { ApiRouter } from '../../http/api-router';
import { query } from '../../http/validate';
import type { RulePrecisionStore } from '../../store/rule-precision-store';
import { principalOf, type RouteDeps } from '../deps';
import { monthsOf, precisionReport, windowOf } from './precision-report';
import { PrecisionQuery, PrecisionReport } from './precision.schema';

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

/** Each rule's precision, measured from human decisions on its flags (docs/rules-safely.md, "Precision"). */
export function precisionRoutes(api: ApiRouter, deps: RouteDeps): void {
  api.route(
    {
      method: 'get',
      path: '/rules/precision',
      tag: 'rules',
      summary:
        'Per rule and rule set version, over a window of days: flags, human-reviewed flags, precision and overturn ' +
        'rate, per preset for prompt rules, and per day.',
      query: PrecisionQuery,
      status: 200,
      response: PrecisionReport,
    },
    async (ctx) => {
      ctx.body = await precisionOf(deps.rulePrecision, principalOf(ctx).tenantId, query(ctx, PrecisionQuery));
    },
  );
}
