import {
  ComplaintOutcome,
  ReportAction,
  ReportCategory,
  ReporterType,
  ReportGround,
  ReportOutcome,
  ReportTargetType,
  type ModerationServiceHandlers,
} from '@vigil/proto';
import { createReport, decideComplaint, decideReport, fileComplaint } from '../service/reports';
import { toReportMessage, toStoredEvent } from './mappers';
import { correlation, listAnswer, oneOf, required, unary, type HandlerDeps } from './unary';

/** A decision request's fields as the use cases take them, its outcome one of `outcomes`. */
function decisionOf<O extends string>(
  outcomes: Parameters<typeof oneOf<O>>[0],
  request: { outcome: string; action?: string; reason: string; actor: string; policy?: string },
) {
  return {
    outcome: oneOf(outcomes, request.outcome, 'outcome'),
    action: request.action ? oneOf(ReportAction, request.action, 'action') : undefined,
    reason: request.reason,
    actor: request.actor,
    ...(request.policy ? { policy: request.policy } : {}),
  };
}

/** Reports (notices) and the complaints about their decisions: receive, read, list, their events, decide. */
export function reportHandlers(
  deps: HandlerDeps,
): Pick<
  ModerationServiceHandlers,
  | 'CreateReport'
  | 'GetReport'
  | 'ListReports'
  | 'GetReportEvents'
  | 'DecideReport'
  | 'FileReportComplaint'
  | 'DecideReportComplaint'
> {
  const { useCases, queries } = deps;
  /** A call that changes one report (`run`), answered with the report as it then stands. */
  const onReport = <Req extends { tenantId?: string; reportId?: string }>(
    method: string,
    run: (request: Req, ids: { tenantId: string; reportId: string; correlationId: string }) => Promise<unknown>,
  ) =>
    unary(deps, method, async (request: Req, tenantId) => {
      const reportId = required(request.reportId, 'report_id');
      await run(request, { tenantId, reportId, correlationId: correlation() });
      return toReportMessage(await queries.getReport(tenantId, reportId));
    });
  return {
    CreateReport: unary(deps, 'CreateReport', async (request, tenantId) => {
      const { report, duplicate } = await createReport(useCases, {
        tenantId,
        correlationId: correlation(),
        target: {
          type: oneOf(ReportTargetType, request.targetType, 'target.type'),
          id: request.targetId || undefined,
          clientId: request.targetClientId || undefined,
        },
        reporter: {
          type: oneOf(ReporterType, request.reporterType, 'reporter.type'),
          id: required(request.reporterId, 'reporter.id'),
          email: request.reporterEmail || undefined,
        },
        category: oneOf(ReportCategory, request.category, 'category'),
        ground: oneOf(ReportGround, request.ground, 'ground'),
        explanation: required(request.explanation, 'explanation'),
        legalGround: request.legalGround || undefined,
        url: request.url || undefined,
        goodFaith: request.goodFaith,
      });
      return { report: toReportMessage(await queries.getReport(tenantId, report._id)), duplicate };
    }),

    GetReport: unary(deps, 'GetReport', async (request, tenantId) =>
      toReportMessage(await queries.getReport(tenantId, required(request.reportId, 'report_id'))),
    ),

    ListReports: unary(deps, 'ListReports', async (request, tenantId) =>
      listAnswer('reports', await queries.listReports(tenantId, request), toReportMessage),
    ),

    GetReportEvents: unary(deps, 'GetReportEvents', async (request, tenantId) => {
      const events = await queries.getReportEvents(tenantId, required(request.reportId, 'report_id'));
      return { events: events.map(toStoredEvent) };
    }),

    DecideReport: onReport('DecideReport', (request, ids) =>
      decideReport(useCases, { ...ids, decision: decisionOf(ReportOutcome, request) }),
    ),

    FileReportComplaint: onReport('FileReportComplaint', (request, ids) =>
      fileComplaint(useCases, { ...ids, text: required(request.text, 'text') }),
    ),

    DecideReportComplaint: onReport('DecideReportComplaint', (request, ids) =>
      decideComplaint(useCases, { ...ids, decision: decisionOf(ComplaintOutcome, request) }),
    ),
  };
}
