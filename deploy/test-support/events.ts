import type { DomainEvent } from '@vigil/proto';

// Domain events for unit tests: a record's moderation and a user's status change with the fields every test needs,
// each test adding or overriding what it checks.

/** The envelope's fields: id, tenant, stream version, time and correlation. */
export type Envelope = Pick<DomainEvent, 'id' | 'tenantId' | 'version' | 'occurredAt' | 'correlationId'>;

/** The envelope used unless a test gives its own fields. */
export const ENVELOPE: Envelope = {
  id: '01JEVENT0000000000000000AA',
  tenantId: 'ten_a',
  version: 2,
  occurredAt: '2026-03-01T10:00:00.000Z',
  correlationId: 'c',
};

/** `rec_1` moderated Flagged (from Compliant) by AI, with no reasons or rules unless `data` gives them. */
export function recordModerated(data: Record<string, unknown> = {}, envelope: Partial<Envelope> = {}): DomainEvent {
  return {
    ...ENVELOPE,
    ...envelope,
    stream: 'record-rec_1',
    type: 'RecordModerated',
    data: {
      recordId: 'rec_1',
      moderationId: 'mod_1',
      status: 'Flagged',
      previousStatus: 'Compliant',
      via: 'AI',
      reasons: [],
      rules: [],
      testMode: false,
      ...data,
    },
  };
}

/** `usr_1` suspended (from Compliant) by hand, unless `data` says otherwise. */
export function userStatusChanged(data: Record<string, unknown> = {}, envelope: Partial<Envelope> = {}): DomainEvent {
  return {
    ...ENVELOPE,
    ...envelope,
    stream: 'user-usr_1',
    type: 'UserStatusChanged',
    data: {
      userId: 'usr_1',
      actionId: 'act_1',
      status: 'Suspended',
      previousStatus: 'Compliant',
      via: 'Manual',
      testMode: false,
      ...data,
    },
  };
}

/** A user's complaint about report `rpt_1` decided (its outcome and the rest from `data`). */
export function reportComplaintDecided(data: Record<string, unknown>, envelope: Partial<Envelope> = {}): DomainEvent {
  return {
    ...ENVELOPE,
    ...envelope,
    stream: 'report-rpt_1',
    type: 'ReportComplaintDecided',
    data: {
      reportId: 'rpt_1',
      complaintId: 'cmp_1',
      target: { type: 'record', id: 'rec_1', clientId: 'post-1' },
      reporter: { type: 'user', id: 'reader-1', hasEmail: true },
      category: 'STATEMENT_CATEGORY_SCAMS_AND_FRAUD',
      ground: 'INCOMPATIBLE_CONTENT',
      trusted: false,
      ...data,
    },
  } as DomainEvent;
}
