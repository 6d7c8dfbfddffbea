import type { DomainEvent } from '@vigil/proto';
import type { Appeal } from '@vigil/proto/dist/generated/vigil/moderation/v1/Appeal';
import type { Record as RecordMessage } from '@vigil/proto/dist/generated/vigil/moderation/v1/Record';
import type { Report } from '@vigil/proto/dist/generated/vigil/moderation/v1/Report';
import type { StoredEvent } from '@vigil/proto/dist/generated/vigil/moderation/v1/StoredEvent';
import type { User } from '@vigil/proto/dist/generated/vigil/moderation/v1/User';
import { ValidationError } from '../domain/errors';
import type { Metadata } from '../domain/metadata';
import type { RecordState } from '../domain/record';
import type { UserState } from '../domain/user';
import type { AppealDoc } from '../store/event-store';
import type { ReportView } from '../store/read-model';

export function parseMetadataJson(json: string | undefined, path: string): Metadata | undefined {
  if (json === undefined || json === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new ValidationError('metadata is not valid JSON', { path });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ValidationError('metadata must be an object', { path });
  }
  return value as Metadata;
}

const iso = (date: Date | undefined) => date?.toISOString();

export function toRecordMessage(record: RecordState & { openReportsCount?: number }): RecordMessage {
  return {
    id: record._id,
    clientId: record.clientId,
    clientUrl: record.clientUrl,
    name: record.name,
    entity: record.entity,
    protected: record.protected,
    metadataJson: record.metadata === undefined ? undefined : JSON.stringify(record.metadata),
    status: record.status,
    statusUpdatedAt: iso(record.statusUpdatedAt),
    statusUpdatedVia: record.statusUpdatedVia,
    // Moderation is synchronous in the moderator: a stored record is never waiting for one.
    moderationPending: false,
    userId: record.userId,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
    passthrough: record.passthrough,
    version: record.version,
    reasons: record.reasons,
    rules: record.rules,
    openReportsCount: record.openReportsCount ?? 0,
  };
}

export function toUserMessage(user: UserState & { flaggedRecordsCount?: number; openReportsCount?: number }): User {
  return {
    id: user._id,
    clientId: user.clientId,
    clientUrl: user.clientUrl,
    email: user.email,
    name: user.name,
    username: user.username,
    protected: user.protected,
    metadataJson: user.metadata === undefined ? undefined : JSON.stringify(user.metadata),
    status: user.status,
    statusUpdatedAt: iso(user.statusUpdatedAt),
    statusUpdatedVia: user.statusUpdatedVia,
    flaggedRecordsCount: user.flaggedRecordsCount ?? 0,
    createdAt: user.createdAt.toISOString(),
    updatedAt: user.updatedAt.toISOString(),
    version: user.version,
    openReportsCount: user.openReportsCount ?? 0,
  };
}

/** A report as the gateway shows it; the reporter's email only when the read asked for it. */
export function toReportMessage(report: ReportView): Report {
  const { decision } = report;
  return {
    id: report._id,
    status: report.status,
    target: report.target,
    reporter: {
      type: report.reporter.type,
      id: report.reporter.id,
      name: report.reporter.name,
      email: report.email,
      hasEmail: report.reporter.hasEmail,
    },
    category: report.category,
    ground: report.ground,
    explanation: report.explanation,
    legalGround: report.legalGround,
    url: report.url,
    goodFaith: report.goodFaith,
    decision: decision
      ? {
          outcome: decision.outcome,
          action: decision.action,
          reason: decision.reason,
          decisionId: decision.decisionId,
          decidedAt: decision.decidedAt.toISOString(),
        }
      : undefined,
    targetOpenReports: report.targetOpenReports,
    createdAt: report.createdAt.toISOString(),
    updatedAt: report.updatedAt.toISOString(),
    complaint: report.complaint
      ? {
          id: report.complaint.id,
          status: report.complaint.status,
          text: report.complaint.text,
          filedAt: report.complaint.filedAt.toISOString(),
          reason: report.complaint.reason,
          action: report.complaint.action,
          decisionId: report.complaint.decisionId,
          decidedAt: report.complaint.decidedAt?.toISOString(),
        }
      : undefined,
  };
}

export function toAppealMessage(appeal: AppealDoc): Appeal {
  return {
    id: appeal._id,
    userId: appeal.userId,
    status: appeal.status,
    text: appeal.text,
    decisionReason: appeal.decisionReason,
    createdAt: appeal.createdAt.toISOString(),
    updatedAt: appeal.updatedAt.toISOString(),
  };
}

export function toStoredEvent(event: DomainEvent): StoredEvent {
  return {
    id: event.id,
    type: event.type,
    version: event.version,
    occurredAt: event.occurredAt,
    dataJson: JSON.stringify(event.data),
  };
}
