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

    DecideReport: unary(deps, 'DecideReport', async (request, tenantId) => {
      const reportId = required(request.reportId, 'report_id');
      await decideReport(useCases, {
        tenantId,
        reportId,
        decision: {
          outcome: oneOf(ReportOutcome, request.outcome, 'outcome'),
          action: request.action ? oneOf(ReportAction, request.action, 'action') : undefined,
          reason: request.reason,
          actor: request.actor,
          ...(request.policy ? { policy: request.policy } : {}),
        },
        correlationId: correlation(),
      });
      return toReportMessage(await queries.getReport(tenantId, reportId));
    }),

    FileReportComplaint: unary(deps, 'FileReportComplaint', async (request, tenantId) => {
      const reportId = required(request.reportId, 'report_id');
      await fileComplaint(useCases, {
        tenantId,
        reportId,
        text: required(request.text, 'text'),
        correlationId: correlation(),
      });
      return toReportMessage(await queries.getReport(tenantId, reportId));
    }),

    DecideReportComplaint: unary(deps, 'DecideReportComplaint', async (request, tenantId) => {
      const reportId = required(request.reportId, 'report_id');
      await decideComplaint(useCases, {
        tenantId,
        reportId,
        decision: {
          outcome: oneOf(ComplaintOutcome, request.outcome, 'outcome'),
          action: request.action ? oneOf(ReportAction, request.action, 'action') : undefined,
          reason: request.reason,
          actor: request.actor,
          ...(request.policy ? { policy: request.policy } : {}),
        },
        correlationId: correlation(),
      });
      return toReportMessage(await queries.getReport(tenantId, reportId));
    }),
  };
}
