import type { Context } from 'koa';
import type { ApiRouter } from '../../http/api-router';
import { query } from '../../http/validate';
import { transparencyReportOf } from '../../use-cases/get-transparency-report';
import { principalOf, type RouteDeps } from '../deps';
import { csvFileName, transparencyCsv } from '../../domain/transparency-report';
import { TransparencyReport, TransparencyReportQuery } from './transparency-report.schema';

/** Whether the caller asked for CSV: `format=csv`, or an `Accept` header that prefers `text/csv`. */
function wantsCsv(ctx: Context, format: TransparencyReportQuery['format']): boolean {
  if (format) return format === 'csv';
  return ctx.accepts('application/json', 'text/csv') === 'text/csv';
}

/** The transparency report (Art. 15 and 24 DSA) of a period, from counters kept as decisions are committed. */
export function transparencyReportRoutes(api: ApiRouter, deps: RouteDeps): void {
  api.route(
    {
      method: 'get',
      path: '/transparency-report',
      tag: 'statements',
      summary:
        'The transparency report of a period [from, to) of at most 366 days, in the sections of the harmonised ' +
        'template: notices, own-initiative restrictions, complaints, automated means. JSON, or CSV with ' +
        '`format=csv` or `Accept: text/csv`.',
      query: TransparencyReportQuery,
      status: 200,
      response: TransparencyReport,
      alsoProduces: { 'text/csv': 'One row per figure: section, measure, breakdown, key, value.' },
    },
    async (ctx) => {
      const q = query(ctx, TransparencyReportQuery);
      const report = await transparencyReportOf(deps.transparencyCounts, principalOf(ctx).tenantId, q);
      ctx.vary('Accept');
      if (wantsCsv(ctx, q.format)) {
        ctx.type = 'text/csv; charset=utf-8';
        ctx.attachment(csvFileName(q), { type: 'inline' });
        ctx.body = transparencyCsv(report);
        return;
      }
      ctx.body = report;
    },
  );
}
