import {
  recordIdFor,
  ulid,
  userIdFor,
  type ReporterType,
  type ReportTarget,
  type ReportTargetType,
} from '@vigil/proto';
import { LIMITS, checkLength } from '../domain/bounds';
import { ConflictError, NotFoundError, ValidationError } from '../domain/errors';
import { manualBasis } from '../domain/decision-basis';
import {
  checkComplaintDecision,
  checkDecision,
  reportClaimKey,
  type ComplaintDecision,
  type ReportDecision,
  type ReportInput,
  type ReportState,
} from '../domain/report';
import { stageReport, type StageContext } from '../domain/stream';
import type { EventStore } from '../store/event-store';
import type { TenantConfigCache } from '../store/tenant-config';
import { moderateManually } from './record-decisions';
import type { UseCases } from './use-cases';
import { setUserStatus } from './user-decisions';

/** A report as received: its target and reporter as named in the request, resolved by createReport. */
export interface CreateReportInput extends Omit<ReportInput, 'target' | 'reporter'> {
  tenantId: string;
  correlationId: string;
  target: { type: ReportTargetType; id?: string; clientId?: string };
  reporter: { type: ReporterType; id: string; email?: string };
}

/** Rounds of claiming a reporter's open report on a target: each lost one means a claim was released meanwhile. */
const CLAIM_ROUNDS = 4;

/**
 * How long after a report a duplicate still stores its reporter's missing contact, milliseconds. No contact is erased
 * within a day of its report (the erase day follows an expiry at least a day later), so one missing then was never
 * stored, and an erased address is never written again.
 */
const CONTACT_REPAIR_MS = 24 * 60 * 60 * 1000;

const invalid = (path: string[], message: string) => new ValidationError(message, { issues: [{ path, message }] });

/**
 * Receives a report, or answers with the reporter's open report on the same target (`duplicate`). The claim on the
 * (reporter, target) pair is inserted first; the report's stream follows. A claim whose report has no stream yet (its
 * request is in flight, or failed after claiming) is completed under the claimed id with this request's report, so a
 * failure never leaves a claim that blocks the reporter.
 */
export async function createReport(
  deps: UseCases,
  input: CreateReportInput,
): Promise<{ report: ReportState; duplicate: boolean }> {
  checkLength(input.explanation, LIMITS.reportExplanation, 'explanation');
  checkLength(input.legalGround, LIMITS.reportLegalGround, 'legalGround');
  checkLength(input.url, LIMITS.url, 'url');
  checkLength(input.reporter.id, LIMITS.reporterId, 'reporter.id');
  checkLength(input.reporter.email, LIMITS.email, 'reporter.email');
  const target = await resolveTarget(deps.store, input.tenantId, input.target);
  const reporter = await resolveReporter(deps.tenants, input.tenantId, input.reporter);
  const key = reportClaimKey(input.tenantId, reporter, target.id);
  const context: StageContext = { tenantId: input.tenantId, correlationId: input.correlationId };
  const report = {
    target,
    reporter,
    category: input.category,
    ground: input.ground,
    explanation: input.explanation,
    legalGround: input.legalGround,
    url: input.url,
    goodFaith: input.goodFaith,
  };
  for (let round = 0; round < CLAIM_ROUNDS; round += 1) {
    const reportId = `rpt_${ulid()}`;
    const holder = await deps.store.reportClaims.claimReport(key, input.tenantId, reportId);
    if (holder === '') continue;
    const id = holder ?? reportId;
    const result = await deps.writer.retrying(async () => {
      const loaded = await deps.store.streams.loadReport(id);
      const existed = loaded.state !== null;
      const staged = stageReport(loaded, { type: 'ReceiveReport', reportId: id, input: report }, context);
      await deps.writer.commit(staged);
      return { report: staged.state as ReportState, duplicate: existed };
    });
    if (result.report.status === 'Decided') {
      // A decided report whose release did not happen (its decision failed after committing): release it, claim again.
      await deps.store.reportClaims.releaseReportClaim(key, id);
      continue;
    }
    // The email is kept only once the report it belongs to exists, and only when the report says its reporter gave
    // one: a duplicate from a reporter who withheld it the first time keeps none. A duplicate may be the retry of a
    // request that committed the report and then failed before the contact was stored, so it stores the contact too
    // (insert-if-absent: one stored already stays as it is).
    const email = input.reporter.email;
    const { createdAt, reporter } = result.report;
    if (email && reporter.hasEmail && (!result.duplicate || Date.now() - createdAt.getTime() < CONTACT_REPAIR_MS)) {
      const { settings } = await deps.tenants.get(input.tenantId);
      await deps.store.reportClaims.saveReportContact(
        id,
        input.tenantId,
        email,
        settings.reporterEmailRetentionDays,
        createdAt,
      );
    }
    return result;
  }
  throw new ConflictError('the report could not be claimed; try again');
}

/**
 * Decides an open report: acts on its target through the manual decision paths (an event on the target's stream,
 * with its webhook and user follow-ups like any other), then records the decision on the report's stream and releases
 * the reporter's claim. A decision already made is answered as made; a refused action (a protected target) leaves the
 * report open.
 */
export async function decideReport(
  deps: UseCases,
  input: { tenantId: string; reportId: string; decision: ReportDecision; correlationId: string },
): Promise<ReportState> {
  const { context, loadOwn, first } = await openDecision(deps, input);
  let decisionId: string | undefined;
  if (checkDecision(first.state, input.decision) === 'new' && input.decision.outcome === 'Actioned') {
    decisionId = await act(deps, first.state as ReportState, input.decision, input.correlationId);
  }
  const decided = await deps.writer.retrying(async (fresh) => {
    const loaded = fresh ? await loadOwn() : first;
    const staged = stageReport(loaded, { type: 'DecideReport', decision: input.decision, decisionId }, context);
    await deps.writer.commit(staged);
    return staged.state as ReportState;
  });
  await deps.store.reportClaims.releaseReportClaim(
    reportClaimKey(input.tenantId, decided.reporter, decided.targetId),
    decided._id,
  );
  return decided;
}

/**
 * Files the reporter's complaint about a decision not to act (Art. 20 DSA): one per report, while the tenant's appeal
 * window after the decision is open. A ReportComplaintFiled event; the report joins the complaints queue.
 */
export async function fileComplaint(
  deps: UseCases,
  input: { tenantId: string; reportId: string; text: string; correlationId: string },
): Promise<ReportState> {
  checkLength(input.text, LIMITS.complaintText, 'text');
  if (input.text.trim() === '') throw invalid(['text'], 'a complaint says why the decision should change');
  const { settings } = await deps.tenants.get(input.tenantId);
  const context: StageContext = { tenantId: input.tenantId, correlationId: input.correlationId };
  const complaintId = `cmp_${ulid()}`;
  return deps.writer.retrying(async () => {
    const loaded = await loadOwnReport(deps, input.tenantId, input.reportId);
    const staged = stageReport(
      loaded,
      { type: 'FileComplaint', complaintId, text: input.text, now: new Date(), windowDays: settings.appealWindowDays },
      context,
    );
    await deps.writer.commit(staged);
    return staged.state as ReportState;
  });
}

/**
 * Decides a report's open complaint: an upheld one acts on the target through the manual decision paths (as acting on
 * the report does), then the decision goes on the report's stream with the policy's grounds, for its own statement.
 */
export async function decideComplaint(
  deps: UseCases,
  input: { tenantId: string; reportId: string; decision: ComplaintDecision; correlationId: string },
): Promise<ReportState> {
  const { context, loadOwn, first } = await openDecision(deps, input);
  const { settings } = await deps.tenants.get(input.tenantId);
  // An unknown policy is refused before anything acts.
  const basis = manualBasis(settings, input.decision.policy);
  let decisionId: string | undefined;
  if (checkComplaintDecision(first.state, input.decision) === 'new' && input.decision.outcome === 'Upheld') {
    decisionId = await act(deps, first.state as ReportState, input.decision, input.correlationId);
  }
  return deps.writer.retrying(async (fresh) => {
    const loaded = fresh ? await loadOwn() : first;
    const staged = stageReport(
      loaded,
      {
        type: 'DecideComplaint',
        decision: input.decision,
        decisionId,
        ...(basis.grounds ? { grounds: basis.grounds } : {}),
        ...(basis.visibility ? { visibility: basis.visibility } : {}),
      },
      context,
    );
    await deps.writer.commit(staged);
    return staged.state as ReportState;
  });
}

/**
 * What a decision on a report starts from: its reason checked, the report's stream as it is (the tenant's own) and
 * how to load it afresh for a retried commit.
 */
async function openDecision(
  deps: UseCases,
  input: { tenantId: string; reportId: string; decision: { reason: string }; correlationId: string },
) {
  checkLength(input.decision.reason, LIMITS.reason, 'reason');
  const context: StageContext = { tenantId: input.tenantId, correlationId: input.correlationId };
  const loadOwn = () => loadOwnReport(deps, input.tenantId, input.reportId);
  return { context, loadOwn, first: await loadOwn() };
}

/** The report's stream, refused as not found when the report is another tenant's. */
async function loadOwnReport(deps: UseCases, tenantId: string, reportId: string) {
  const loaded = await deps.store.streams.loadReport(reportId);
  if (loaded.state && loaded.state.tenantId !== tenantId) throw new NotFoundError('report not found');
  return loaded;
}

/** Flags the reported record, or suspends or bans the reported user, by hand; returns the decision's id. */
async function act(
  deps: UseCases,
  report: ReportState,
  decision: Pick<ReportDecision, 'action' | 'reason' | 'actor' | 'policy'>,
  correlationId: string,
) {
  const { tenantId } = report;
  const common = {
    tenantId,
    reason: decision.reason,
    actor: decision.actor,
    correlationId,
    ...(decision.policy ? { policy: decision.policy } : {}),
    notice: { reportId: report._id, trusted: report.trusted, ground: report.ground },
  };
  if (report.target.type === 'record') {
    const moderationId = `mod_${ulid()}`;
    await moderateManually(deps, { ...common, recordId: report.target.id, status: 'Flagged', moderationId });
    return moderationId;
  }
  const actionId = `act_${ulid()}`;
  const status = decision.action === 'Ban' ? 'Banned' : 'Suspended';
  await setUserStatus(deps, { ...common, userId: report.target.id, status, actionId });
  return actionId;
}

/** The reported record or user of this tenant, by id or client id; a deleted record is not found. */
async function resolveTarget(
  store: EventStore,
  tenantId: string,
  target: CreateReportInput['target'],
): Promise<ReportTarget> {
  if ((target.id === undefined) === (target.clientId === undefined)) {
    throw invalid(['target'], 'a target is named by its id or by its clientId, one of the two');
  }
  if (target.clientId !== undefined) checkLength(target.clientId, LIMITS.clientId, 'target.clientId');
  if (target.type === 'record') {
    const id = target.id ?? recordIdFor(tenantId, target.clientId!);
    const { state } = await store.streams.loadRecord(id, false);
    if (!state || state.tenantId !== tenantId || state.deleted) throw new NotFoundError('reported record not found');
    return { type: 'record', id, clientId: state.clientId };
  }
  const id = target.id ?? userIdFor(tenantId, target.clientId!);
  const { state } = await store.streams.loadUser(id, false);
  if (!state || state.tenantId !== tenantId) throw new NotFoundError('reported user not found');
  return { type: 'user', id, clientId: state.clientId };
}

/** The reporter as stored: a trusted flagger must be one the tenant's settings list (the name comes from there). */
async function resolveReporter(
  tenants: TenantConfigCache,
  tenantId: string,
  reporter: CreateReportInput['reporter'],
): Promise<ReportState['reporter']> {
  if (reporter.type === 'user') {
    return { type: 'user', id: reporter.id, hasEmail: reporter.email !== undefined && reporter.email !== '' };
  }
  if (reporter.email !== undefined) {
    throw invalid(['reporter', 'email'], 'a trusted flagger is reached through the tenant, not by an email here');
  }
  const { settings } = await tenants.get(tenantId);
  const flagger = settings.trustedFlaggers.find((candidate) => candidate.id === reporter.id);
  if (!flagger) throw invalid(['reporter', 'id'], 'not a trusted flagger in the tenant settings');
  return { type: 'trusted_flagger', id: flagger.id, name: flagger.name, hasEmail: false };
}
