import { statementsOf } from '../../domain/statements-of';
import type { Context } from 'koa';
import type { ApiRouter } from '../../http/api-router';
import { body } from '../../http/validate';
import { idParam } from '../../http/params';
import { decide } from '../../use-cases/decide';
import { fileComplaint } from '../../use-cases/file-complaint';
import { callerOf, deciderOf, callModerator, principalOf, type RouteDeps } from '../deps';
import { eventsOf } from '../shared/stored-events';
import { listRoute } from '../shared/list-route';
import { toReportView } from '../shared/presenters';
import { StatementList } from '../statements/statements.schema';
import {
  ComplaintBody,
  ComplaintDecisionBody,
  CreateReportBody,
  ListReportsQuery,
  ReportAcknowledgement,
  ReportData,
  ReportDecisionBody,
  ReportList,
} from './reports.schema';

const COMPLAINT_REFUSED =
  'report_not_decided: the report is still open; report_actioned: it was acted on (the affected user appeals ' +
  'instead); complaint_exists: its complaint was filed already; complaint_window_closed: the appeal window after ' +
  'the decision has passed.';

export function reportRoutes(api: ApiRouter, deps: RouteDeps): void {
  /** How the tenant's reports present their complaint window, and (on single reads) the reporter's complaint link. */
  async function viewOptions(ctx: Context, withEmail: boolean) {
    const tenantId = principalOf(ctx).tenantId;
    const { appealWindowDays } = await deps.configStore.cachedSettings(tenantId);
    return {
      withEmail,
      appealWindowDays,
      ...(withEmail
        ? {
            complaintUrl: (reportId: string, until: Date) =>
              deps.appealLinks.complaintUrlFor(tenantId, reportId, until),
          }
        : {}),
    };
  }

  api.route(
    {
      method: 'post',
      path: '/reports',
      tag: 'reports',
      summary:
        "Report a record or a user (a notice, from an end user or a trusted flagger). Answers with the report's id " +
        'as acknowledgement; a reporter with an open report on the same target gets that one back.',
      body: CreateReportBody,
      status: 202,
      response: ReportAcknowledgement,
    },
    async (ctx) => {
      const input = body(ctx, CreateReportBody);
      const result = await callModerator(deps, ctx, 'createReport', {
        targetType: input.target.type,
        targetId: input.target.id,
        targetClientId: input.target.clientId,
        reporterType: input.reporter.type,
        reporterId: input.reporter.id,
        reporterEmail: input.reporter.email,
        category: input.category,
        ground: input.ground,
        explanation: input.explanation,
        legalGround: input.legalGround,
        url: input.url,
        goodFaith: input.goodFaith ?? false,
      });
      // A new report's email is not echoed back: it was just sent, and answers may be logged by clients' proxies.
      ctx.body = { data: toReportView(result.report!, await viewOptions(ctx, false)), duplicate: result.duplicate };
    },
  );

  listRoute(
    api,
    {
      path: '/reports',
      tag: 'reports',
      summary: 'List reports with cursor pagination and filters (status, target, trusted).',
      query: ListReportsQuery,
      response: ReportList,
    },
    async (ctx, q, page) => {
      const result = await callModerator(deps, ctx, 'listReports', {
        ...page,
        endingBefore: q.ending_before,
        status: q.status,
        targetId: q.target,
        trusted: q.trusted === undefined ? undefined : q.trusted === 'true',
        complaint: q.complaint,
      });
      const options = await viewOptions(ctx, false);
      return { data: result.reports.map((report) => toReportView(report, options)), hasMore: result.hasMore };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/reports/:id',
      tag: 'reports',
      summary: "A report, with its reporter's email when one was given.",
      status: 200,
      response: ReportData,
    },
    async (ctx) => {
      const report = await callModerator(deps, ctx, 'getReport', { reportId: idParam(ctx) });
      ctx.body = { data: toReportView(report, await viewOptions(ctx, true)) };
    },
  );

  /** Answers a decision on the report (`method`) or its complaint with the report as it then stands. */
  const decideOn =
    (
      method: 'decideReport' | 'decideReportComplaint',
      schema: typeof ReportDecisionBody | typeof ComplaintDecisionBody,
    ) =>
    async (ctx: Context) => {
      const input = body(ctx, schema);
      const report = await decide(deps, deciderOf(ctx), method, idParam(ctx), {
        outcome: input.outcome,
        action: input.action,
        reason: input.reason,
        policy: input.policy ?? '',
      });
      ctx.body = { data: toReportView(report, await viewOptions(ctx, true)) };
    };

  api.route(
    {
      method: 'post',
      path: '/reports/:id/decision',
      tag: 'reports',
      summary:
        'Decide an open report: act (flag the record; suspend or ban the user, as a manual decision) or take no ' +
        'action, with a reason. The reporter learns it through the report.decided webhook.',
      body: ReportDecisionBody,
      status: 200,
      response: ReportData,
    },
    decideOn('decideReport', ReportDecisionBody),
  );

  api.route(
    {
      method: 'post',
      path: '/reports/:id/complaint',
      tag: 'reports',
      summary:
        "File the reporter's complaint about a decision not to act on their report (Art. 20 DSA). One per report, " +
        'while the appeal window after the decision is open (appealWindowDays, at least six months). The report ' +
        'joins the complaints queue (GET /reports?complaint=Open).',
      body: ComplaintBody,
      status: 201,
      response: ReportData,
      errors: { 404: 'not_found: no such report.', 409: COMPLAINT_REFUSED },
    },
    async (ctx) => {
      const input = body(ctx, ComplaintBody);
      const report = await fileComplaint(deps, callerOf(ctx), idParam(ctx), input.text);
      ctx.body = { data: toReportView(report, await viewOptions(ctx, false)) };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/reports/:id/complaint/decision',
      tag: 'reports',
      summary:
        "Decide a report's open complaint: Upheld acts on the target (flag the record; suspend or ban the user), " +
        'Rejected keeps the decision not to act. Either way the decision has its own statement of reasons ' +
        '(GET /reports/{id}/statements), and the reporter learns it (report.complaint_decided, and an email).',
      body: ComplaintDecisionBody,
      status: 200,
      response: ReportData,
      errors: {
        404: 'not_found: no such report, or it has no complaint.',
        409: 'conflict: the complaint was decided otherwise already.',
      },
    },
    decideOn('decideReportComplaint', ComplaintDecisionBody),
  );

  api.route(
    {
      method: 'get',
      path: '/reports/:id/statements',
      tag: 'statements',
      summary:
        "A report's statements of reasons, oldest first: each decision on its reporter's complaint (Art. 20(5) DSA). " +
        'The restriction an upheld complaint imposed has its own statement on the record or user.',
      status: 200,
      response: StatementList,
      errors: { 404: 'not_found: no such report.' },
    },
    async (ctx) => {
      const tenantId = principalOf(ctx).tenantId;
      const result = await callModerator(deps, ctx, 'getReportEvents', { reportId: idParam(ctx) });
      ctx.body = { data: statementsOf(eventsOf(tenantId, result), { appealWindowDays: 0 }), has_more: false };
    },
  );
}
