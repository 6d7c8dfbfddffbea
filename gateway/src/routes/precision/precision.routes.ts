import type { ApiRouter } from '../../http/api-router';
import { query } from '../../http/validate';
import { precisionOf } from '../../use-cases/get-precision-report';
import { principalOf, type RouteDeps } from '../deps';
import { PrecisionQuery, PrecisionReport } from './precision.schema';

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
