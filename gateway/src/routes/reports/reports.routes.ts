import type { ApiRouter } from '../../http/api-router';
import { body, query } from '../../http/validate';
import { callModerator, decide, idParam, type RouteDeps } from '../deps';
import { toReportView } from '../shared/presenters';
import {
  CreateReportBody,
  ListReportsQuery,
  ReportAcknowledgement,
  ReportData,
  ReportDecisionBody,
  ReportList,
} from './reports.schema';

export function reportRoutes(api: ApiRouter, deps: RouteDeps): void {
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
      ctx.body = { data: toReportView(result.report!, { withEmail: false }), duplicate: result.duplicate };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/reports',
      tag: 'reports',
      summary: 'List reports with cursor pagination and filters (status, target, trusted).',
      query: ListReportsQuery,
      status: 200,
      response: ReportList,
    },
    async (ctx) => {
      const q = query(ctx, ListReportsQuery);
      const result = await callModerator(deps, ctx, 'listReports', {
        limit: q.limit,
        startingAfter: q.starting_after,
        endingBefore: q.ending_before,
        status: q.status,
        targetId: q.target,
        trusted: q.trusted === undefined ? undefined : q.trusted === 'true',
      });
      ctx.body = {
        data: result.reports.map((report) => toReportView(report, { withEmail: false })),
        has_more: result.hasMore,
      };
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
      ctx.body = { data: toReportView(report, { withEmail: true }) };
    },
  );

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
    async (ctx) => {
      const input = body(ctx, ReportDecisionBody);
      const report = await decide(deps, ctx, 'decideReport', {
        outcome: input.outcome,
        action: input.action,
        reason: input.reason,
        policy: input.policy ?? '',
      });
      ctx.body = { data: toReportView(report, { withEmail: true }) };
    },
  );
}
