import type { EndpointStateDoc, WebhookEndpointDoc } from '@vigil/proto';
import type { z } from 'zod';
import type { RpcResponse } from '../../grpc/moderator-client';
import type { BacktestState } from '../../store/backtest-store';
import type { PaymentActionRecord } from '../../store/payment-action-log-store';
import type { RetroactionState } from '../../store/retroaction-store';
import type { AppealView } from '../appeals/appeals.schema';
import type { BacktestView } from '../backtests/backtests.schema';
import type { RecordView } from '../records/records.schema';
import type { ReportView } from '../reports/reports.schema';
import type { RetroactionView } from '../retroactions/retroactions.schema';
import type { PaymentActionView, UserView } from '../users/users.schema';
import type { EndpointView } from '../webhook-endpoints/webhook-endpoints.schema';
import { parseMetadata } from './paging.schema';

// How the API shows what the moderator and the stores return; the console renders the same views.

export function toRecordView(record: RpcResponse<'getRecord'>): z.infer<typeof RecordView> {
  return {
    id: record.id,
    clientId: record.clientId,
    clientUrl: record.clientUrl ?? null,
    name: record.name ?? null,
    entity: record.entity,
    protected: record.protected,
    metadata: parseMetadata(record.metadataJson),
    moderationStatus: (record.status as 'Compliant' | 'Flagged' | undefined) ?? null,
    moderationStatusCreatedAt: record.statusUpdatedAt ?? null,
    moderationStatusVia: record.statusUpdatedVia ?? null,
    moderationPending: record.moderationPending,
    reasons: record.reasons,
    rules: record.rules,
    user: record.userId ?? null,
    passthrough: record.passthrough,
    openReportsCount: record.openReportsCount,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

export function toUserView(user: RpcResponse<'getUser'>, appealUrl: string | null): z.infer<typeof UserView> {
  return {
    id: user.id,
    clientId: user.clientId,
    clientUrl: user.clientUrl ?? null,
    email: user.email ?? null,
    name: user.name ?? null,
    username: user.username ?? null,
    protected: user.protected,
    metadata: parseMetadata(user.metadataJson),
    actionStatus: (user.status as 'Compliant' | 'Suspended' | 'Banned' | undefined) ?? null,
    actionStatusCreatedAt: user.statusUpdatedAt ?? null,
    actionStatusVia: user.statusUpdatedVia ?? null,
    flaggedRecordsCount: user.flaggedRecordsCount,
    openReportsCount: user.openReportsCount,
    appealUrl,
    createdAt: user.createdAt,
    updatedAt: user.updatedAt,
  };
}

export function toPaymentActionView(doc: PaymentActionRecord): z.infer<typeof PaymentActionView> {
  return {
    id: doc._id,
    userId: doc.userId,
    action: doc.action,
    status: doc.state,
    accountId: doc.accountId ?? null,
    skipReason: doc.skipReason ?? null,
    attemptCount: doc.attemptCount,
    attempts: (doc.attempts ?? []).map((attempt) => ({
      at: attempt.at.toISOString(),
      durationMs: attempt.durationMs,
      statusCode: attempt.statusCode ?? null,
      error: attempt.error ?? null,
      stripeRequestId: attempt.stripeRequestId ?? null,
      stripeErrorType: attempt.stripeErrorType ?? null,
      stripeErrorCode: attempt.stripeErrorCode ?? null,
      idempotencyKey: attempt.idempotencyKey ?? null,
    })),
    lastError: doc.lastError ?? null,
    stripeRequestId: doc.stripeRequestId ?? null,
    completedAt: doc.completedAt?.toISOString() ?? null,
    createdAt: doc.createdAt.toISOString(),
    updatedAt: doc.updatedAt.toISOString(),
  };
}

export function toAppealView(appeal: RpcResponse<'createAppeal'>): z.infer<typeof AppealView> {
  return {
    id: appeal.id,
    user: appeal.userId,
    status: appeal.status as 'Open' | 'Approved' | 'Rejected',
    text: appeal.text,
    decisionReason: appeal.decisionReason ?? null,
    createdAt: appeal.createdAt,
    updatedAt: appeal.updatedAt,
  };
}

/** A report as the API shows it; the reporter's email only where `withEmail` (a single report's read). */
export function toReportView(
  report: RpcResponse<'getReport'>,
  {
    withEmail,
    appealWindowDays,
    complaintUrl,
  }: {
    withEmail: boolean;
    /** The tenant's appeal window: a decision not to act can be complained about this long. */
    appealWindowDays?: number;
    /** The signed complaint page for this report's reporter, when it is to be shown. */
    complaintUrl?: (reportId: string, openUntil: Date) => string | null;
  },
): z.infer<typeof ReportView> {
  const { target, reporter, decision, complaint } = report;
  const openUntil =
    decision?.outcome === 'NoAction' && appealWindowDays !== undefined
      ? new Date(new Date(decision.decidedAt).getTime() + appealWindowDays * 86_400_000)
      : null;
  const complaintOpen = openUntil !== null && !complaint && openUntil.getTime() > Date.now();
  return {
    id: report.id,
    status: report.status as z.infer<typeof ReportView>['status'],
    target: {
      type: (target?.type ?? 'record') as z.infer<typeof ReportView>['target']['type'],
      id: target?.id ?? '',
      clientId: target?.clientId ?? '',
    },
    reporter: {
      type: (reporter?.type ?? 'user') as z.infer<typeof ReportView>['reporter']['type'],
      id: reporter?.id ?? '',
      name: reporter?.name ?? null,
      email: withEmail ? (reporter?.email ?? null) : null,
      hasEmail: reporter?.hasEmail ?? false,
    },
    category: report.category as z.infer<typeof ReportView>['category'],
    ground: report.ground as z.infer<typeof ReportView>['ground'],
    explanation: report.explanation,
    legalGround: report.legalGround ?? null,
    url: report.url ?? null,
    goodFaith: report.goodFaith,
    decision: decision
      ? {
          outcome: decision.outcome as NonNullable<z.infer<typeof ReportView>['decision']>['outcome'],
          action: (decision.action ?? null) as NonNullable<z.infer<typeof ReportView>['decision']>['action'],
          reason: decision.reason,
          decisionId: decision.decisionId ?? null,
          decidedAt: decision.decidedAt,
        }
      : null,
    targetOpenReports: report.targetOpenReports,
    complaint: complaint
      ? {
          id: complaint.id,
          status: complaint.status as NonNullable<z.infer<typeof ReportView>['complaint']>['status'],
          text: complaint.text,
          filedAt: complaint.filedAt,
          reason: complaint.reason ?? null,
          action: (complaint.action ?? null) as NonNullable<z.infer<typeof ReportView>['complaint']>['action'],
          decisionId: complaint.decisionId ?? null,
          decidedAt: complaint.decidedAt ?? null,
        }
      : null,
    complaintOpenUntil: openUntil?.toISOString() ?? null,
    complaintUrl: complaintOpen && complaintUrl ? complaintUrl(report.id, openUntil) : null,
    createdAt: report.createdAt,
    updatedAt: report.updatedAt,
  };
}

const iso = (date: Date | undefined): string | null => (date ? date.toISOString() : null);

/** Secrets are never shown again after creation (and rotation, for the new one). */
export function toEndpointView(doc: WebhookEndpointDoc, state: EndpointStateDoc | null): z.infer<typeof EndpointView> {
  return {
    id: doc._id,
    url: doc.url,
    description: doc.description ?? null,
    events: doc.events,
    enabled: doc.enabled,
    disabledAt: iso(state?.disabledAt),
    disabledReason: state?.disabledReason ?? null,
    failingSince: iso(state?.failingSince),
    createdAt: doc.createdAt.toISOString(),
    updatedAt: doc.updatedAt.toISOString(),
  };
}

/** The notifier's bookkeeping, not part of the log a client reads. */
/**
 * What the delivery log shows of a delivery (the notifier's document also holds its scheduling and the event that
 * caused it, which are its own business and may change).
 */
const DELIVERY_VIEW_FIELDS = [
  'endpointId',
  'webhookId',
  'event',
  'subjectId',
  'state',
  'attemptCount',
  'attempts',
  'dueAt',
  'lastAttemptAt',
  'lastStatusCode',
  'lastError',
  'completedAt',
  'body',
  'createdAt',
  'updatedAt',
] as const;

export function toDeliveryView(doc: Record<string, unknown>): Record<string, unknown> {
  const view: Record<string, unknown> = { id: doc._id };
  for (const field of DELIVERY_VIEW_FIELDS) if (doc[field] !== undefined) view[field] = doc[field];
  // A due time matters only while the delivery waits for its next attempt.
  if (doc.state !== 'pending') delete view.dueAt;
  return view;
}

export function backtestView(state: BacktestState, withResult = true): z.input<typeof BacktestView> {
  const { job, run } = state;
  return {
    id: job._id,
    version: job.version,
    status: state.status,
    ...(state.error ? { error: state.error } : {}),
    selection: job.selection,
    ai: job.ai,
    progress: { selected: run?.selected ?? null, processed: run?.processed ?? 0 },
    author: job.author,
    createdAt: job.createdAt.toISOString(),
    startedAt: run?.startedAt.toISOString() ?? null,
    finishedAt: run?.finishedAt?.toISOString() ?? null,
    expiresAt: job.expiresAt.toISOString(),
    result: withResult ? (run?.result ?? null) : null,
  };
}

export function retroactionView(state: RetroactionState): z.input<typeof RetroactionView> {
  const { job, run } = state;
  return {
    id: job._id,
    backtestId: job.backtestId,
    version: job.version,
    status: state.status,
    ...(state.error ? { error: state.error } : {}),
    selection: job.selection,
    ai: job.ai,
    predicted: job.predicted,
    progress: { selected: run?.selected ?? null, processed: run?.processed ?? 0 },
    counts: run?.counts ?? { toFlagged: 0, toCompliant: 0, unchanged: 0, heldByHumans: 0, skipped: 0 },
    author: job.author,
    createdAt: job.createdAt.toISOString(),
    startedAt: run?.startedAt.toISOString() ?? null,
    finishedAt: run?.finishedAt?.toISOString() ?? null,
  };
}
