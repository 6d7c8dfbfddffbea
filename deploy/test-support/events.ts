import type { DomainEvent } from '@vigil/proto';

// Domain events for unit tests: a record's moderation, a user's status change and a report's steps with the fields
// every test needs, each test adding or overriding what it checks.

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

/** The test's `data` over the defaults, on `stream`, in the test's envelope over the default one. */
function event(
  stream: string,
  type: DomainEvent['type'],
  defaults: Record<string, unknown>,
  data: Record<string, unknown>,
  envelope: Partial<Envelope>,
): DomainEvent {
  return { ...ENVELOPE, ...envelope, stream, type, data: { ...defaults, ...data } } as DomainEvent;
}

/** The report `rpt_1` on record `rec_1` (`post-1`) by a user who gave an address, under scams and fraud. */
const REPORT = {
  reportId: 'rpt_1',
  target: { type: 'record', id: 'rec_1', clientId: 'post-1' },
  reporter: { type: 'user', id: 'reader-1', hasEmail: true },
  category: 'STATEMENT_CATEGORY_SCAMS_AND_FRAUD',
};

/** `rec_1` moderated Flagged (from Compliant) by AI, with no reasons or rules unless `data` gives them. */
export function recordModerated(data: Record<string, unknown> = {}, envelope: Partial<Envelope> = {}): DomainEvent {
  const moderation = {
    recordId: 'rec_1',
    moderationId: 'mod_1',
    status: 'Flagged',
    previousStatus: 'Compliant',
    via: 'AI',
    reasons: [],
    rules: [],
    testMode: false,
  };
  return event('record-rec_1', 'RecordModerated', moderation, data, envelope);
}

/** `usr_1` suspended (from Compliant) by hand, unless `data` says otherwise. */
export function userStatusChanged(data: Record<string, unknown> = {}, envelope: Partial<Envelope> = {}): DomainEvent {
  const change = {
    userId: 'usr_1',
    actionId: 'act_1',
    status: 'Suspended',
    previousStatus: 'Compliant',
    via: 'Manual',
    testMode: false,
  };
  return event('user-usr_1', 'UserStatusChanged', change, data, envelope);
}

/** Report `rpt_1` received, on the platform's terms, with no explanation unless `data` gives one. */
export function reportReceived(data: Record<string, unknown> = {}, envelope: Partial<Envelope> = {}): DomainEvent {
  const notice = { ...REPORT, ground: 'INCOMPATIBLE_CONTENT', explanation: '' };
  return event('report-rpt_1', 'ReportReceived', notice, data, envelope);
}

/** Report `rpt_1` decided: no action, for a reason `data` may replace. */
export function reportDecided(data: Record<string, unknown> = {}, envelope: Partial<Envelope> = {}): DomainEvent {
  return event('report-rpt_1', 'ReportDecided', { ...REPORT, outcome: 'NoAction', reason: 'genuine' }, data, envelope);
}

/** A user's complaint about report `rpt_1` decided (its outcome and the rest from `data`). */
export function reportComplaintDecided(data: Record<string, unknown>, envelope: Partial<Envelope> = {}): DomainEvent {
  const complaint = { ...REPORT, complaintId: 'cmp_1', ground: 'INCOMPATIBLE_CONTENT', trusted: false };
  return event('report-rpt_1', 'ReportComplaintDecided', complaint, data, envelope);
}
