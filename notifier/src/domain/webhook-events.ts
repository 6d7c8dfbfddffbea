import { createHash } from 'node:crypto';
import {
  statementOf,
  type ComplaintOutcome,
  type DomainEvent,
  type RecordDoc,
  type RecordStatus,
  type Statement,
  type ReportAction,
  type ReportCategory,
  type ReportOutcome,
  type ReporterType,
  type ReportTarget,
  type UserDoc,
  type UserStatus,
  type Via,
  type WebhookEventName,
  type WebhookNestedUser,
  type WebhookRecordView,
  type WebhookUserView,
} from '@vigil/proto';

/**
 * What a domain event asks the client to be told, before the payload is filled from the projections. Stored with
 * each delivery, so the payload can be built later (the projection may trail the event) and rebuilt identically.
 */
export type WebhookTrigger =
  | {
      kind: 'record';
      event: Extract<WebhookEventName, `record.${string}`>;
      /** The body's top-level `id`: the moderation id. */
      subjectId: string;
      tenantId: string;
      recordId: string;
      userId?: string;
      status: RecordStatus;
      via: Via;
      /** When the status changed (the event's time). */
      at: Date;
      /** Version of the record stream the event is at; the payload waits for the projection to reach it. */
      version: number;
      /** The rule set version that judged it; absent for manual decisions and events stored before versions. */
      ruleSetVersion?: number;
      /** The decision's statement of reasons (Art. 17 DSA), when it restricts or lifts a restriction. */
      statement?: Statement;
    }
  | {
      kind: 'user';
      event: Extract<WebhookEventName, `user.${string}`>;
      /** The body's top-level `id`: the user action id. */
      subjectId: string;
      tenantId: string;
      userId: string;
      status: UserStatus;
      via: Via;
      at: Date;
      version: number;
      /** The decision's statement of reasons (Art. 17 DSA), when it restricts or lifts a restriction. */
      statement?: Statement;
    }
  | {
      /** A report's outcome: everything the body says comes from the event (no projection is read). */
      kind: 'report';
      /** `report.complaint_decided`: the outcome of the reporter's complaint about a decision not to act. */
      event: 'report.decided' | 'report.complaint_decided';
      /** The body's top-level `id`: the report id, the acknowledgement its reporter was given. */
      subjectId: string;
      tenantId: string;
      target: ReportTarget;
      reporter: { type: ReporterType; id: string };
      category: ReportCategory;
      outcome: ReportOutcome | ComplaintOutcome;
      action?: ReportAction;
      reason: string;
      /** A complaint's decision: its id and its statement of reasons (Art. 20(5) DSA). */
      complaint?: { id: string; decisionId?: string; statement: Statement };
      at: Date;
      /** Version of the report stream the event is at. */
      version: number;
    }
  | {
      /** A rule whose flags people overturn past the tenant's threshold: the body comes from the event alone. */
      kind: 'rule';
      event: 'rule.degraded';
      /** The body's top-level `id`: the event's id. */
      subjectId: string;
      tenantId: string;
      ruleId: string;
      ruleSetVersion: number;
      flags: number;
      reviewed: number;
      confirmed: number;
      overturned: number;
      overturnRate: number;
      threshold: number;
      minReviews: number;
      at: Date;
      version: number;
    }
  | {
      /** A bank hash put in flood quarantine: the body comes from the event alone (the hash's id, never its value). */
      kind: 'hash';
      event: 'hash.quarantined';
      /** The body's top-level `id`: the event's id. */
      subjectId: string;
      tenantId: string;
      hashId: string;
      bankId: string;
      bankName: string;
      hashKind: string;
      number: number;
      threshold: number;
      windowSeconds: number;
      count: number;
      at: Date;
      version: number;
    };

/**
 * What the event itself says of its subject, for the payload (events stored before views existed have none; their
 * payload is filled from the projections).
 */
export type SubjectView = { kind: 'record'; record: WebhookRecordView } | { kind: 'user'; user: WebhookUserView };

export type TriggerDecision =
  | { kind: 'trigger'; trigger: WebhookTrigger; view?: SubjectView }
  | { kind: 'test_mode'; subjectId: string }
  | { kind: 'none' };

const RECORD_EVENTS = { Flagged: 'record.flagged', Compliant: 'record.compliant' } as const;
const USER_EVENTS = { Suspended: 'user.suspended', Compliant: 'user.compliant', Banned: 'user.banned' } as const;

/**
 * Iffy's rules: a record event when the moderation changed the status (a first-ever Compliant counts, null →
 * Compliant), a user event for every status action that changed the status; nothing in test mode.
 */
export function triggerOf(event: DomainEvent): TriggerDecision {
  const at = new Date(event.occurredAt);
  if (event.type === 'RecordModerated') {
    const { data } = event;
    if (data.previousStatus === data.status) return { kind: 'none' };
    if (data.testMode) return { kind: 'test_mode', subjectId: data.moderationId };
    return {
      kind: 'trigger',
      trigger: {
        kind: 'record',
        event: RECORD_EVENTS[data.status],
        subjectId: data.moderationId,
        tenantId: event.tenantId,
        recordId: data.recordId,
        userId: data.userId,
        status: data.status,
        via: data.via,
        at,
        version: event.version,
        ...(data.ruleSetVersion !== undefined ? { ruleSetVersion: data.ruleSetVersion } : {}),
      },
      view: data.view ? { kind: 'record', record: data.view } : undefined,
    };
  }
  if (event.type === 'UserStatusChanged') {
    const { data } = event;
    // A person confirming the status automation gave: the user's status did not change.
    if (data.previousStatus === data.status) return { kind: 'none' };
    if (data.testMode) return { kind: 'test_mode', subjectId: data.actionId };
    return {
      kind: 'trigger',
      trigger: {
        kind: 'user',
        event: USER_EVENTS[data.status],
        subjectId: data.actionId,
        tenantId: event.tenantId,
        userId: data.userId,
        status: data.status,
        via: data.via,
        at,
        version: event.version,
      },
      view: data.view ? { kind: 'user', user: data.view } : undefined,
    };
  }
  if (event.type === 'ReportDecided') {
    const { data } = event;
    return {
      kind: 'trigger',
      trigger: {
        kind: 'report',
        event: 'report.decided',
        subjectId: data.reportId,
        tenantId: event.tenantId,
        target: data.target,
        reporter: { type: data.reporter.type, id: data.reporter.id },
        category: data.category,
        outcome: data.outcome,
        ...(data.action !== undefined ? { action: data.action } : {}),
        reason: data.reason,
        at,
        version: event.version,
      },
    };
  }
  if (event.type === 'ReportComplaintDecided') {
    const { data } = event;
    return {
      kind: 'trigger',
      trigger: {
        kind: 'report',
        event: 'report.complaint_decided',
        subjectId: data.reportId,
        tenantId: event.tenantId,
        target: data.target,
        reporter: { type: data.reporter.type, id: data.reporter.id },
        category: data.category,
        outcome: data.outcome,
        ...(data.action !== undefined ? { action: data.action } : {}),
        reason: data.reason,
        complaint: {
          id: data.complaintId,
          ...(data.decisionId !== undefined ? { decisionId: data.decisionId } : {}),
          // A complaint's statement needs no tenant setting: it offers no further internal complaint.
          statement: statementOf(event, { appealWindowDays: 0 })!,
        },
        at,
        version: event.version,
      },
    };
  }
  if (event.type === 'RuleDegraded') {
    const { data } = event;
    return {
      kind: 'trigger',
      trigger: {
        kind: 'rule',
        event: 'rule.degraded',
        subjectId: event.id,
        tenantId: event.tenantId,
        ...data,
        at,
        version: event.version,
      },
    };
  }
  if (event.type === 'HashQuarantined') {
    const { data } = event;
    return {
      kind: 'trigger',
      trigger: {
        kind: 'hash',
        event: 'hash.quarantined',
        subjectId: event.id,
        tenantId: event.tenantId,
        hashId: data.hashId,
        bankId: data.bankId,
        bankName: data.bankName,
        hashKind: data.kind,
        number: data.number,
        threshold: data.threshold,
        windowSeconds: data.windowSeconds,
        count: data.count,
        at,
        version: event.version,
      },
    };
  }
  return { kind: 'none' };
}

/** Whether an endpoint subscribed to `event` (an empty list means every event). */
export function subscribes(events: readonly WebhookEventName[], event: WebhookEventName): boolean {
  return events.length === 0 || events.includes(event);
}

const digest = (...parts: string[]): string =>
  createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 32);

/** The `webhook-id`: one per webhook event, the same for every endpoint, retry and re-published copy. */
export const webhookIdOf = (eventId: string): string => `msg_${digest(eventId)}`;

/** One delivery per (webhook event, endpoint): a re-consumed event maps to the same `_id`. */
export const deliveryIdOf = (eventId: string, endpointId: string): string => `dlv_${digest(eventId, endpointId)}`;

const ms = (date: Date): string => String(date.getTime());

type NestedUser = Pick<
  UserDoc,
  '_id' | 'clientId' | 'clientUrl' | 'protected' | 'metadata' | 'status' | 'statusUpdatedAt'
>;

/** A record's user as the event's view shows it, in the projection's shape. */
export function nestedUserOf(userId: string, view: WebhookNestedUser): NestedUser {
  return {
    _id: userId,
    clientId: view.clientId,
    clientUrl: view.clientUrl,
    protected: view.protected,
    metadata: view.metadata,
    status: view.status,
    statusUpdatedAt: view.statusUpdatedAt ? new Date(view.statusUpdatedAt) : undefined,
  };
}

/** Iffy's record payload. The status fields come from the event, so a later moderation cannot leak into it. */
export function recordPayload(
  trigger: Extract<WebhookTrigger, { kind: 'record' }>,
  record: Pick<RecordDoc, '_id' | 'clientId' | 'clientUrl' | 'name' | 'entity' | 'protected' | 'metadata'> &
    Pick<WebhookRecordView, 'maskedContent'>,
  user: NestedUser | null,
): Record<string, unknown> {
  // Key order is Iffy's; JSON.stringify leaves out the undefined ones (passthrough records have no name). The masked
  // copy of the text comes from the moderation's view only (the projection holds none).
  return {
    id: record._id,
    clientId: record.clientId,
    clientUrl: record.clientUrl,
    name: record.name,
    entity: record.entity,
    protected: record.protected,
    metadata: record.metadata,
    maskedContent: record.maskedContent,
    status: trigger.status,
    statusUpdatedAt: ms(trigger.at),
    statusUpdatedVia: trigger.via,
    ruleSetVersion: trigger.ruleSetVersion,
    statement: trigger.statement,
    user: user
      ? {
          id: user._id,
          clientId: user.clientId,
          clientUrl: user.clientUrl,
          protected: user.protected,
          metadata: user.metadata,
          status: user.status,
          statusUpdatedAt: user.statusUpdatedAt ? ms(user.statusUpdatedAt) : undefined,
        }
      : undefined,
  };
}

/** Iffy's user payload: no email, name, username or reasoning. */
export function userPayload(
  trigger: Extract<WebhookTrigger, { kind: 'user' }>,
  user: Pick<UserDoc, '_id' | 'clientId' | 'clientUrl' | 'protected' | 'metadata'>,
): Record<string, unknown> {
  return {
    id: user._id,
    clientId: user.clientId,
    clientUrl: user.clientUrl,
    protected: user.protected,
    metadata: user.metadata,
    status: trigger.status,
    statusUpdatedAt: ms(trigger.at),
    statusUpdatedVia: trigger.via,
    statement: trigger.statement,
  };
}

/**
 * A report's outcome, for the platform to tell its reporter: the report, its target, the reporter by the platform's own
 * id, and the decision. Never the reporter's email, nor the report's explanation.
 */
export function reportPayload(trigger: Extract<WebhookTrigger, { kind: 'report' }>): Record<string, unknown> {
  return {
    id: trigger.subjectId,
    target: { type: trigger.target.type, id: trigger.target.id, clientId: trigger.target.clientId },
    reporter: { type: trigger.reporter.type, id: trigger.reporter.id },
    category: trigger.category,
    outcome: trigger.outcome,
    action: trigger.action,
    reason: trigger.reason,
    decidedAt: ms(trigger.at),
    ...(trigger.complaint
      ? {
          complaint: { id: trigger.complaint.id, decisionId: trigger.complaint.decisionId ?? null },
          statement: trigger.complaint.statement,
        }
      : {}),
  };
}

/** A degraded rule: which rule of which rule set version, its counts under that version and the threshold passed. */
export function rulePayload(trigger: Extract<WebhookTrigger, { kind: 'rule' }>): Record<string, unknown> {
  return {
    ruleId: trigger.ruleId,
    ruleSetVersion: trigger.ruleSetVersion,
    flags: trigger.flags,
    reviewed: trigger.reviewed,
    confirmed: trigger.confirmed,
    overturned: trigger.overturned,
    overturnRate: trigger.overturnRate,
    threshold: trigger.threshold,
    minReviews: trigger.minReviews,
    degradedAt: ms(trigger.at),
  };
}

/**
 * A hash in flood quarantine: which hash of which bank, the threshold and window it passed, and the count. Its matches
 * are held until a person releases or dismisses it (docs/hash-banks.md, "Flood quarantine").
 */
export function hashPayload(trigger: Extract<WebhookTrigger, { kind: 'hash' }>): Record<string, unknown> {
  return {
    hashId: trigger.hashId,
    bank: { id: trigger.bankId, name: trigger.bankName },
    kind: trigger.hashKind,
    quarantine: trigger.number,
    threshold: trigger.threshold,
    windowSeconds: trigger.windowSeconds,
    count: trigger.count,
    quarantinedAt: ms(trigger.at),
  };
}

/** The exact bytes sent: compact JSON with Iffy's key order `event, timestamp, id, payload`. */
export function webhookBody(trigger: WebhookTrigger, payload: Record<string, unknown>, at: Date): string {
  return JSON.stringify({ event: trigger.event, timestamp: ms(at), id: trigger.subjectId, payload });
}
