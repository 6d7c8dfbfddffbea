import type { DomainEvent, EventOf, Via } from './events';
import {
  DEFAULT_POLICY,
  groundsOf,
  renderExplanation,
  type AutomatedDecision,
  type DecisionAccount,
  type DecisionMonetary,
  type DecisionVisibility,
  type PolicyGrounds,
} from './policies';
import type { ReportCategory } from './reports';

/**
 * Statements of reasons (Art. 17 DSA), computed from the decision events the moderator stores. Each restricting event
 * carries what its statement needs (its policy's grounds, the notice it answered, the configured visibility
 * restriction), so a statement is a pure function of one event and the tenant's appeal window: nothing is written per
 * record beyond the event itself, and the webhook, the email and the API all say the same thing.
 *
 * A statement holds ids, enumerations, the policy's text and the decision's reasons with matched text left out (the
 * part of an engine reason after `: ` quotes the content). It never holds a record's name, content or URL, nor a user's
 * name or email, passthrough or not.
 */

type SourceType =
  'SOURCE_ARTICLE_16' | 'SOURCE_TRUSTED_FLAGGER' | 'SOURCE_TYPE_OTHER_NOTIFICATION' | 'SOURCE_VOLUNTARY';

export interface Statement {
  /** `sor_` and the decision event's id; the event id is the TDB's `puid`. */
  id: string;
  eventId: string;
  /**
   * `restriction`: a restriction imposed; `reversal`: one lifted (a reinstatement, a record cleared); `complaint`: the
   * decision on a reporter's complaint about a decision not to act (Art. 20(5) DSA), upheld (the target was acted on)
   * or rejected.
   */
  kind: 'restriction' | 'reversal' | 'complaint';
  /**
   * The decision: the moderation id (`mod_…`) or the user action id (`act_…`); for a complaint, the complaint id
   * (`cmp_…`).
   */
  decisionId: string;
  subject: { type: 'record' | 'user'; id: string };
  userId?: string;
  /** When the decision applied (the TDB's `application_date`), ISO time. */
  decidedAt: string;
  restriction: {
    visibility?: DecisionVisibility[];
    account?: DecisionAccount;
    monetary?: DecisionMonetary;
    /** Always null: Vigil's restrictions last until a later decision lifts them. */
    endDate: null;
  };
  /** The ground relied on; absent for a rejected complaint, which restricts nothing and so rests on none. */
  ground?: DecisionGround;
  /** For illegal content: the law relied on. */
  legalGround?: string;
  /** The policy's explanation, filled. */
  explanation: string;
  referenceUrl?: string;
  /** The policy relied on; absent for a rejected complaint, like the ground. */
  policy?: { id: string; name: string };
  category: ReportCategory;
  /** Facts and circumstances (the TDB's `decision_facts`, at most 5,000 characters). */
  facts: string;
  source: SourceType;
  /** The report the decision answered, when it answered one. */
  reportId?: string;
  /**
   * A complaint's decision: its outcome, and the moderation or user action an upheld complaint made (that action has
   * its own restriction statement on the target).
   */
  complaint?: { id: string; outcome: 'Upheld' | 'Rejected'; actionDecisionId?: string };
  automatedDetection: boolean;
  automatedDecision: AutomatedDecision;
  via: Via;
  redress: Redress;
}

type DecisionGround = 'DECISION_GROUND_ILLEGAL_CONTENT' | 'DECISION_GROUND_INCOMPATIBLE_CONTENT';

/** A statement that rests on a ground and a policy: every one but a rejected complaint's. */
export type GroundedStatement = Statement & Required<Pick<Statement, 'ground' | 'policy'>>;

/** A restriction's statement (the kind the appeal page shows and the Transparency Database receives). */
export const isRestriction = (statement: Statement): statement is GroundedStatement =>
  statement.kind === 'restriction' && statement.ground !== undefined && statement.policy !== undefined;

interface Redress {
  /** The page where the user can appeal (Art. 20), when a link can be given here. */
  appealUrl: string | null;
  appealWindowDays: number;
  /** The appeal stays open until this time, ISO. */
  appealOpenUntil: string;
  /** The other routes (Art. 21 out-of-court settlement, courts), in words. */
  otherRoutes: string;
}

export interface StatementContext {
  appealWindowDays: number;
  appealUrl?: string | null;
}

const FACTS_MAX = 5000;
const DAY_MS = 24 * 60 * 60 * 1000;
const OTHER_ROUTES =
  'You may also refer the decision to a certified out-of-court dispute settlement body (Art. 21 DSA), ' +
  'or to a court.';

type Decision = EventOf<'RecordModerated'> | EventOf<'UserStatusChanged'>;

/** Whether the event is a decision a statement of reasons is due for, and which kind. */
function kindOf(event: DomainEvent): { event: Decision; kind: Statement['kind'] } | null {
  if (event.type === 'RecordModerated') {
    const { data } = event;
    if (data.testMode) return null;
    // A flag, or a person upholding one (a new decision with its own statement); an automatic re-moderation that
    // keeps the flag restricts nothing new.
    if (data.status === 'Flagged' && (data.previousStatus !== 'Flagged' || data.via === 'Manual')) {
      return { event, kind: 'restriction' };
    }
    if (data.status === 'Compliant' && data.previousStatus === 'Flagged') return { event, kind: 'reversal' };
    return null;
  }
  if (event.type === 'UserStatusChanged') {
    const { data } = event;
    if (data.testMode) return null;
    if (data.status !== 'Compliant' && (data.previousStatus !== data.status || data.via === 'Manual')) {
      return { event, kind: 'restriction' };
    }
    if (data.status === 'Compliant' && (data.previousStatus === 'Suspended' || data.previousStatus === 'Banned')) {
      return { event, kind: 'reversal' };
    }
    return null;
  }
  return null;
}

/** How the decision was made: an engine's or automation's, a person's, or a person upholding an automated one. */
function automationOf(
  via: Via,
  confirmsAutomated: boolean | undefined,
): {
  automatedDetection: boolean;
  automatedDecision: AutomatedDecision;
} {
  if (
    via === 'AI' ||
    via === 'Automation' ||
    via === 'Automation Flagged Record' ||
    via === 'Automation All Compliant'
  ) {
    return { automatedDetection: true, automatedDecision: 'AUTOMATED_DECISION_FULLY' };
  }
  if (via === 'Manual' && confirmsAutomated) {
    return { automatedDetection: true, automatedDecision: 'AUTOMATED_DECISION_PARTIALLY' };
  }
  return { automatedDetection: false, automatedDecision: 'AUTOMATED_DECISION_NOT_AUTOMATED' };
}

/** The source of a decision: the notice it answered, or the platform's own initiative. */
function sourceOf(notice: EventOf<'RecordModerated'>['data']['notice']): SourceType {
  if (!notice) return 'SOURCE_VOLUNTARY';
  if (notice.trusted) return 'SOURCE_TRUSTED_FLAGGER';
  return notice.ground === 'ILLEGAL_CONTENT' ? 'SOURCE_ARTICLE_16' : 'SOURCE_TYPE_OTHER_NOTIFICATION';
}

/** An engine reason without the text it matched (`Content contains blocked word: x` → its first part). */
const withoutMatch = (reason: string): string => reason.split(': ')[0] ?? reason;

const HOW: Record<string, string> = {
  AUTOMATED_DECISION_FULLY: 'by automated means',
  AUTOMATED_DECISION_PARTIALLY: 'by a moderator, who upheld an automated decision',
  AUTOMATED_DECISION_NOT_AUTOMATED: 'by a moderator',
};

const FROM: Record<SourceType, string> = {
  SOURCE_ARTICLE_16: 'after a notice of illegal content',
  SOURCE_TRUSTED_FLAGGER: 'after a notice from a trusted flagger',
  SOURCE_TYPE_OTHER_NOTIFICATION: 'after a report from a user',
  SOURCE_VOLUNTARY: 'on the platform’s own initiative',
};

const WHAT: Record<string, string> = {
  DECISION_VISIBILITY_CONTENT_REMOVED: 'removed',
  DECISION_VISIBILITY_CONTENT_DISABLED: 'disabled',
  DECISION_VISIBILITY_CONTENT_DEMOTED: 'demoted',
  DECISION_VISIBILITY_CONTENT_AGE_RESTRICTED: 'age-restricted',
  DECISION_VISIBILITY_CONTENT_INTERACTION_RESTRICTED: 'restricted in interactions',
  DECISION_VISIBILITY_CONTENT_LABELLED: 'labelled',
};

const COMPLAINT_REDRESS =
  'This decision on your complaint is final within the platform. You may refer it to a certified out-of-court ' +
  'dispute settlement body (Art. 21 DSA), or to a court.';

/**
 * The statement of a complaint's decision: to the reporter who complained that their report was not acted on. An
 * upheld complaint states the restriction its action imposed; a rejected one states that none was, and why.
 */
function complaintStatementOf(event: EventOf<'ReportComplaintDecided'>): Statement {
  const { data } = event;
  const upheld = data.outcome === 'Upheld';
  const grounds: PolicyGrounds = data.grounds ?? groundsOf(DEFAULT_POLICY);
  const source = sourceOf({ reportId: data.reportId, trusted: data.trusted, ground: data.ground });
  const restriction: Statement['restriction'] = { endDate: null };
  let what: string;
  if (!upheld) {
    what = `The complaint about the decision not to act on report ${data.reportId} was rejected by a moderator`;
  } else if (data.action === 'Flag') {
    const visibility = data.visibility ?? 'DECISION_VISIBILITY_CONTENT_DISABLED';
    restriction.visibility = [visibility];
    what = `The complaint was upheld by a moderator, and the content was ${WHAT[visibility] ?? 'restricted'}`;
  } else {
    const banned = data.action === 'Ban';
    restriction.account = banned ? 'DECISION_ACCOUNT_TERMINATED' : 'DECISION_ACCOUNT_SUSPENDED';
    what = `The complaint was upheld by a moderator, and the account was ${banned ? 'terminated' : 'suspended'}`;
  }
  const parts = [`${what}, ${FROM[source]}.`];
  if (upheld) parts.push(`Policy: ${grounds.name}.`);
  parts.push(`Reasons: ${data.reason}.`);
  const automation = automationOf('Manual', false);
  return {
    id: `sor_${event.id}`,
    eventId: event.id,
    kind: 'complaint',
    decisionId: data.complaintId,
    subject: { type: data.target.type, id: data.target.id },
    ...(data.target.type === 'user' ? { userId: data.target.id } : {}),
    decidedAt: event.occurredAt,
    restriction,
    ...(upheld
      ? {
          ground:
            grounds.ground === 'ILLEGAL_CONTENT'
              ? 'DECISION_GROUND_ILLEGAL_CONTENT'
              : 'DECISION_GROUND_INCOMPATIBLE_CONTENT',
          policy: { id: grounds.policyId, name: grounds.name },
        }
      : {}),
    ...(upheld && grounds.legalGround !== undefined ? { legalGround: grounds.legalGround } : {}),
    explanation: upheld
      ? renderExplanation(grounds.explanation, {
          policy: grounds.name,
          rules: '',
          via: HOW.AUTOMATED_DECISION_NOT_AUTOMATED ?? '',
        })
      : 'The reported content was examined again and found neither illegal nor incompatible with the terms of service.',
    ...(upheld && grounds.referenceUrl !== undefined ? { referenceUrl: grounds.referenceUrl } : {}),
    category: data.category,
    facts: clip(parts.join(' '), FACTS_MAX),
    source,
    reportId: data.reportId,
    complaint: {
      id: data.complaintId,
      outcome: data.outcome,
      ...(data.decisionId !== undefined ? { actionDecisionId: data.decisionId } : {}),
    },
    ...automation,
    via: 'Manual',
    redress: {
      appealUrl: null,
      appealWindowDays: 0,
      appealOpenUntil: event.occurredAt,
      otherRoutes: COMPLAINT_REDRESS,
    },
  };
}

/** The statement of reasons of one event, or null when the event restricts (or lifts) nothing. */
export function statementOf(event: DomainEvent, context: StatementContext): Statement | null {
  if (event.type === 'ReportComplaintDecided') return complaintStatementOf(event);
  const found = kindOf(event);
  if (!found) return null;
  const { kind } = found;
  const decision = found.event;
  const { data } = decision;
  const grounds: PolicyGrounds = data.grounds ?? groundsOf(DEFAULT_POLICY);
  const automation = automationOf(data.via, data.confirmsAutomated);
  const source = sourceOf(data.notice);
  const decidedAt = decision.occurredAt;
  const restriction: Statement['restriction'] = { endDate: null };
  let subject: Statement['subject'];
  let decisionId: string;
  let userId: string | undefined;
  let what: string;
  let reasons: string[];
  let rules: string[] = [];
  if (decision.type === 'RecordModerated') {
    const d = decision.data;
    subject = { type: 'record', id: d.recordId };
    decisionId = d.moderationId;
    userId = d.userId;
    const visibility = d.visibility ?? 'DECISION_VISIBILITY_CONTENT_DISABLED';
    if (kind === 'restriction') restriction.visibility = [visibility];
    what =
      kind === 'restriction'
        ? `The ${d.view?.entity ?? 'content'} was ${WHAT[visibility] ?? 'restricted'}`
        : `The restriction of the ${d.view?.entity ?? 'content'} was lifted`;
    rules = d.rules;
    reasons = d.via === 'Manual' ? d.reasons : [...new Set(d.reasons.map(withoutMatch))];
  } else {
    const d = decision.data;
    subject = { type: 'user', id: d.userId };
    decisionId = d.actionId;
    userId = d.userId;
    if (kind === 'restriction') {
      const banned = d.status === 'Banned';
      restriction.account = banned ? 'DECISION_ACCOUNT_TERMINATED' : 'DECISION_ACCOUNT_SUSPENDED';
      if (d.payouts) restriction.monetary = banned ? 'DECISION_MONETARY_TERMINATION' : 'DECISION_MONETARY_SUSPENSION';
      what = banned ? 'The account was terminated' : 'The account was suspended';
      if (d.payouts) what += ', and its payouts paused';
    } else {
      what = 'The account was reinstated';
    }
    reasons = d.reason ? [d.reason] : [];
    if (d.via === 'Automation Flagged Record') reasons.push('Flagged content reached the suspension threshold');
  }
  const how = HOW[automation.automatedDecision] ?? '';
  const explanation = renderExplanation(grounds.explanation, {
    policy: grounds.name,
    rules: rules.join(', '),
    via: how,
  });
  const parts = [`${what} ${how}, ${FROM[source]}.`, `Policy: ${grounds.name}.`];
  if (rules.length > 0) parts.push(`Rules matched: ${rules.join(', ')}.`);
  if (reasons.length > 0) parts.push(`Reasons: ${reasons.join('; ')}.`);
  const facts = clip(parts.join(' '), FACTS_MAX);
  const openUntil = new Date(new Date(decidedAt).getTime() + context.appealWindowDays * DAY_MS);
  return {
    id: `sor_${decision.id}`,
    eventId: decision.id,
    kind,
    decisionId,
    subject,
    ...(userId !== undefined ? { userId } : {}),
    decidedAt,
    restriction,
    ground:
      grounds.ground === 'ILLEGAL_CONTENT' ? 'DECISION_GROUND_ILLEGAL_CONTENT' : 'DECISION_GROUND_INCOMPATIBLE_CONTENT',
    ...(grounds.legalGround !== undefined ? { legalGround: grounds.legalGround } : {}),
    explanation,
    ...(grounds.referenceUrl !== undefined ? { referenceUrl: grounds.referenceUrl } : {}),
    policy: { id: grounds.policyId, name: grounds.name },
    category: grounds.category,
    facts,
    source,
    ...(data.notice ? { reportId: data.notice.reportId } : {}),
    ...automation,
    via: data.via,
    redress: {
      appealUrl: context.appealUrl ?? null,
      appealWindowDays: context.appealWindowDays,
      appealOpenUntil: openUntil.toISOString(),
      otherRoutes: OTHER_ROUTES,
    },
  };
}

function clip(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}
