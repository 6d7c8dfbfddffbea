import { createHash } from 'node:crypto';
import type {
  ComplaintOutcome,
  ComplaintStatus,
  DecisionVisibility,
  DomainEvent,
  PolicyGrounds,
  ReportAction,
  ReportCategory,
  ReportGround,
  ReportOutcome,
  ReportReporter,
  ReportStatus,
  ReportTarget,
} from '@vigil/proto';
import { ConflictError, NotFoundError, ValidationError } from './errors';
import type { PendingEvent } from './events';

export interface ReportInput {
  target: ReportTarget;
  reporter: ReportReporter;
  category: ReportCategory;
  ground: ReportGround;
  explanation: string;
  legalGround?: string;
  url?: string;
  goodFaith: boolean;
}

/**
 * A report stream folded: the `reports` projection document. `targetId`, `status` and `trusted` sit at the top level
 * because FerretDB serves only equalities on top-level fields from an index (the queue and the open counts filter on
 * them).
 */
export interface ReportState extends ReportInput {
  _id: string;
  tenantId: string;
  targetId: string;
  /** The reporter is a trusted flagger (Art. 22 DSA): first in the review queue. */
  trusted: boolean;
  status: ReportStatus;
  decision?: {
    outcome: ReportOutcome;
    action?: ReportAction;
    reason: string;
    decisionId?: string;
    actor?: string;
    decidedAt: Date;
  };
  /**
   * The reporter's complaint about a decision not to act (Art. 20 DSA), once filed. `complaintKey` repeats its
   * status with the tenant at the top level (`<tenantId>:<status>`, see `complaintKeyOf`): the queue of a tenant's open
   * complaints is one equality on an index of its own, since FerretDB serves only the leading field of an index.
   */
  complaint?: {
    id: string;
    status: ComplaintStatus;
    text: string;
    filedAt: Date;
    reason?: string;
    action?: ReportAction;
    decisionId?: string;
    actor?: string;
    decidedAt?: Date;
  };
  complaintKey?: string;
  version: number;
  lastEventId: string;
  sort: string;
  createdAt: Date;
  updatedAt: Date;
}

/** Why a complaint cannot be filed: the `reason` in a 409's details, which the gateway answers with its own code. */
type ComplaintRefusal = 'report_not_decided' | 'report_actioned' | 'complaint_exists' | 'complaint_window_closed';

export interface ComplaintDecision {
  outcome: ComplaintOutcome;
  action?: ReportAction;
  reason: string;
  actor: string;
  policy?: string;
}

export interface ReportDecision {
  outcome: ReportOutcome;
  action?: ReportAction;
  reason: string;
  actor: string;
  /** The policy an action rests on (its statement of reasons); the default policy when absent. */
  policy?: string;
}

export type ReportCommand =
  | { type: 'ReceiveReport'; reportId: string; input: ReportInput }
  | { type: 'DecideReport'; decision: ReportDecision; decisionId?: string }
  | { type: 'FileComplaint'; complaintId: string; text: string; now: Date; windowDays: number }
  | {
      type: 'DecideComplaint';
      decision: ComplaintDecision;
      decisionId?: string;
      grounds?: PolicyGrounds;
      visibility?: DecisionVisibility;
    };

const ACTIONS_ON = { record: ['Flag'], user: ['Suspend', 'Ban'] } as const;

const invalid = (path: string, message: string) =>
  new ValidationError(message, { issues: [{ path: [path], message }] });

/**
 * Throws unless a decision that `acts` names an action allowed on the report's target, one that does not act names
 * none (`noActionMessage` says so), and either gives its reason.
 */
function checkAction(
  state: ReportState,
  decision: { action?: ReportAction; reason: string },
  acts: boolean,
  noActionMessage: string,
): void {
  if (acts) {
    const allowed: readonly string[] = ACTIONS_ON[state.target.type];
    if (decision.action === undefined || !allowed.includes(decision.action)) {
      throw invalid('action', `acting on a reported ${state.target.type} is one of ${allowed.join(', ')}`);
    }
  } else if (decision.action !== undefined) {
    throw invalid('action', noActionMessage);
  }
  if (decision.reason.trim() === '') throw invalid('reason', 'a decision gives its reason');
}

/**
 * Whether `decision` is new on this report (`new`), or the one already made (`repeat`: a form sent twice, a retried
 * call); throws when it cannot be made. The use case asks before it acts on the target, so that a refused decision
 * changes nothing.
 */
export function checkDecision(state: ReportState | null, decision: ReportDecision): 'new' | 'repeat' {
  if (!state) throw new NotFoundError('report not found');
  checkAction(state, decision, decision.outcome === 'Actioned', 'no action is taken with NoAction');
  const made = state.decision;
  if (!made) return 'new';
  if (made.outcome === decision.outcome && made.action === decision.action) return 'repeat';
  throw new ConflictError('the report is already decided', { reportId: state._id });
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** See ReportState.complaintKey. */
export const complaintKeyOf = (tenantId: string, status: ComplaintStatus): string => `${tenantId}:${status}`;

const refused = (reason: ComplaintRefusal, message: string, reportId: string) =>
  new ConflictError(message, { reason, reportId });

/**
 * Whether the reporter may complain about this report's decision now (Art. 20 DSA): a decision not to act, no
 * complaint yet, and the tenant's appeal window after the decision still open. Throws otherwise.
 */
function checkComplaint(state: ReportState | null, now: Date, windowDays: number): ReportState {
  if (!state) throw new NotFoundError('report not found');
  const { decision } = state;
  if (!decision) throw refused('report_not_decided', 'the report is not decided yet', state._id);
  if (decision.outcome !== 'NoAction') {
    throw refused('report_actioned', 'the report was acted on: its reporter has nothing to complain about', state._id);
  }
  if (state.complaint)
    throw refused('complaint_exists', 'a complaint about this decision was filed already', state._id);
  if (now.getTime() > decision.decidedAt.getTime() + windowDays * DAY_MS) {
    throw refused('complaint_window_closed', 'the time to complain about this decision has passed', state._id);
  }
  return state;
}

/** Whether `decision` is new on the report's open complaint (`new`) or the one already made (`repeat`); throws else. */
export function checkComplaintDecision(state: ReportState | null, decision: ComplaintDecision): 'new' | 'repeat' {
  if (!state) throw new NotFoundError('report not found');
  const { complaint } = state;
  if (!complaint) throw new NotFoundError('the report has no complaint', { reportId: state._id });
  checkAction(state, decision, decision.outcome === 'Upheld', 'no action is taken when a complaint is rejected');
  if (complaint.status === 'Open') return 'new';
  if (complaint.status === decision.outcome && complaint.action === decision.action) return 'repeat';
  throw new ConflictError('the complaint is already decided', { reason: 'complaint_decided', reportId: state._id });
}

export function decideReport(state: ReportState | null, command: ReportCommand): PendingEvent[] {
  switch (command.type) {
    case 'ReceiveReport': {
      // The stream exists: a report completed under this id by another request of the same reporter (see the claim
      // in the use case). Nothing new.
      if (state) return [];
      const { input } = command;
      const notice = input.ground === 'ILLEGAL_CONTENT';
      if (notice && (!input.legalGround || !input.url || !input.goodFaith)) {
        throw invalid(
          'legalGround',
          'a notice of illegal content gives its legal ground, URL and good-faith statement',
        );
      }
      return [
        {
          type: 'ReportReceived',
          data: {
            reportId: command.reportId,
            target: input.target,
            reporter: input.reporter,
            category: input.category,
            ground: input.ground,
            explanation: input.explanation,
            ...(notice ? { legalGround: input.legalGround, url: input.url, goodFaith: true } : {}),
          },
        },
      ];
    }
    case 'DecideReport': {
      if (checkDecision(state, command.decision) === 'repeat') return [];
      const current = state as ReportState;
      const { decision } = command;
      return [
        {
          type: 'ReportDecided',
          data: {
            reportId: current._id,
            target: current.target,
            reporter: { type: current.reporter.type, id: current.reporter.id, hasEmail: current.reporter.hasEmail },
            category: current.category,
            outcome: decision.outcome,
            action: decision.action,
            decisionId: command.decisionId,
            reason: decision.reason,
            actor: decision.actor || undefined,
          },
        },
      ];
    }
    case 'FileComplaint': {
      const current = checkComplaint(state, command.now, command.windowDays);
      return [
        {
          type: 'ReportComplaintFiled',
          data: {
            reportId: current._id,
            complaintId: command.complaintId,
            target: current.target,
            reporter: { type: current.reporter.type, id: current.reporter.id },
            text: command.text,
          },
        },
      ];
    }
    case 'DecideComplaint': {
      if (checkComplaintDecision(state, command.decision) === 'repeat') return [];
      const current = state as ReportState;
      const { decision } = command;
      const upheld = decision.outcome === 'Upheld';
      return [
        {
          type: 'ReportComplaintDecided',
          data: {
            reportId: current._id,
            complaintId: current.complaint!.id,
            target: current.target,
            reporter: { type: current.reporter.type, id: current.reporter.id, hasEmail: current.reporter.hasEmail },
            category: current.category,
            ground: current.ground,
            trusted: current.trusted,
            outcome: decision.outcome,
            action: decision.action,
            decisionId: command.decisionId,
            reason: decision.reason,
            actor: decision.actor || undefined,
            ...(upheld && command.grounds ? { grounds: command.grounds } : {}),
            ...(upheld && decision.action === 'Flag' && command.visibility ? { visibility: command.visibility } : {}),
          },
        },
      ];
    }
  }
}

export function evolveReport(state: ReportState | null, event: DomainEvent): ReportState {
  const at = new Date(event.occurredAt);
  switch (event.type) {
    case 'ReportReceived': {
      const { data } = event;
      const received: ReportState = {
        _id: data.reportId,
        tenantId: event.tenantId,
        target: data.target,
        targetId: data.target.id,
        reporter: data.reporter,
        trusted: data.reporter.type === 'trusted_flagger',
        category: data.category,
        ground: data.ground,
        explanation: data.explanation,
        goodFaith: data.goodFaith ?? false,
        status: 'Open',
        version: event.version,
        lastEventId: event.id,
        sort: event.id,
        createdAt: at,
        updatedAt: at,
      };
      if (data.legalGround !== undefined) received.legalGround = data.legalGround;
      if (data.url !== undefined) received.url = data.url;
      return received;
    }
    case 'ReportDecided': {
      if (!state) throw new Error(`event ${event.type} at version ${event.version} before the stream started`);
      const { data } = event;
      const decision: NonNullable<ReportState['decision']> = {
        outcome: data.outcome,
        ...decidedBy(data, at),
      };
      return {
        ...state,
        status: 'Decided',
        decision,
        version: event.version,
        lastEventId: event.id,
        updatedAt: at,
      };
    }
    case 'ReportComplaintFiled': {
      if (!state) throw new Error(`event ${event.type} at version ${event.version} before the stream started`);
      return {
        ...state,
        complaint: { id: event.data.complaintId, status: 'Open', text: event.data.text, filedAt: at },
        complaintKey: complaintKeyOf(state.tenantId, 'Open'),
        version: event.version,
        lastEventId: event.id,
        updatedAt: at,
      };
    }
    case 'ReportComplaintDecided': {
      if (!state?.complaint) throw new Error(`event ${event.type} at version ${event.version} before its complaint`);
      const { data } = event;
      const complaint: NonNullable<ReportState['complaint']> = {
        ...state.complaint,
        status: data.outcome,
        ...decidedBy(data, at),
      };
      return {
        ...state,
        complaint,
        complaintKey: complaintKeyOf(state.tenantId, data.outcome),
        version: event.version,
        lastEventId: event.id,
        updatedAt: at,
      };
    }
    default:
      throw new Error(`event ${event.type} does not belong to a report stream`);
  }
}

/** A decision's reason and time, and its action, id and actor where it has them (a projection stores no undefined). */
function decidedBy(data: { reason: string; action?: ReportAction; decisionId?: string; actor?: string }, at: Date) {
  return {
    reason: data.reason,
    decidedAt: at,
    ...(data.action !== undefined ? { action: data.action } : {}),
    ...(data.decisionId !== undefined ? { decisionId: data.decisionId } : {}),
    ...(data.actor !== undefined ? { actor: data.actor } : {}),
  };
}

/**
 * The claim a reporter's open report holds on its target (see COLLECTIONS.reportClaims): a digest of the tenant, the
 * reporter and the target, so that equal reporters of different tenants never meet.
 */
export function reportClaimKey(
  tenantId: string,
  reporter: Pick<ReportReporter, 'type' | 'id'>,
  targetId: string,
): string {
  const digest = createHash('sha256')
    .update([tenantId, reporter.type, reporter.id, targetId].join('\u0000'))
    .digest('hex');
  return `rcl_${digest.slice(0, 32)}`;
}
