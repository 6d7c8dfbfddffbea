import { manualBasis } from '../domain/decision-basis';
import {
  type DecisionNotice,
  recordIdFor,
  ulid,
  userIdFor,
  type Command,
  type DomainEvent,
  type RecordStatus,
  type TenantVersions,
  type UserData,
  type UserStatus,
} from '@vigil/proto';
import type { Logger } from 'pino';
import type { ActivityGate, ModerationEngine } from '../engine';
import { LIMITS, checkLength, checkUserBounds } from '../domain/bounds';
import { NotFoundError } from '../domain/errors';
import { validateMetadata } from '../domain/metadata';
import type { RecordCommand, RecordState } from '../domain/record';
import { stageRecord, stageUser, type StageContext, type Staged } from '../domain/stream';
import type { UserCommand, UserState } from '../domain/user';
import type { EventStore } from '../store/event-store';
import type { TenantConfigCache } from '../store/tenant-config';
import { moderate, type ModerateInput, type ModerateResult, type ModerationDeps } from './moderate';
import { rerunModeration, retroact, type RerunOutcome, type RetroactOptions } from './rerun';
import { JudgementCarry } from './judgement-carry';
import { checkReplay, type ReplayCheck } from './replay-check';
import type { ShadowRunner } from '../shadow/shadow-runner';
import type { OutboxSignal } from './outbox-signal';
import { StreamWriter } from './stream-writer';
import { createReport, decideComplaint, decideReport, fileComplaint, type CreateReportInput } from './reports';
import type { ComplaintDecision, ReportDecision, ReportState } from '../domain/report';
import { affectedUsers, flaggedCountAfter, reconcileCommand, UserReconciliation } from './user-reconciliation';

export interface ServiceDeps {
  store: EventStore;
  engine: ModerationEngine;
  tenants: TenantConfigCache;
  log: Logger;
  /** Told of the events a commit appended, so the outbox relay publishes them without reading them back. */
  outbox: OutboxSignal;
  /** Runs the tenants' shadow rules after their moderations (optional). */
  shadow?: ShadowRunner;
  /** Called after each commit with its events (each rule's counters); never throws. */
  afterCommit?: (events: DomainEvent[]) => Promise<void>;
  /** Attempts of one decision under concurrent writers before giving up with ConflictError. */
  maxAttempts?: number;
  /** The tenants' configuration versions seen on calls and commands, stamped on every new event. */
  versions?: TenantVersions;
  /** Marks each moderation of a record without images while it runs: image inference yields to them. */
  textActivity?: ActivityGate;
}

/**
 * Judgements kept for the retries of ingest commands whose commit failed (see JudgementCarry): at most this many, each
 * for at most ten minutes (the ingest consumer's retries back off to INGEST_RETRY_MAX_MS, 30 s by default).
 */
const CARRIED_JUDGEMENTS = 1000;
const CARRIED_JUDGEMENT_TTL_MS = 10 * 60_000;

/**
 * The moderator's use cases, each as load → decide → commit: load the streams, decide and stage their events in the
 * domain, commit them (one append, then the projections) with optimistic concurrency, re-reading and deciding again
 * on a conflict (StreamWriter); then the automatic user follow-ups (UserReconciliation). The moderations themselves
 * live in `moderate.ts`; the human decisions on one record or user are here. Throws AppErrors only.
 */
export class ModerationUseCases {
  private readonly writer: StreamWriter;
  private readonly users: UserReconciliation;
  private readonly moderation: ModerationDeps;

  constructor(private readonly deps: ServiceDeps) {
    this.writer = new StreamWriter(deps.store, deps.outbox, deps.maxAttempts ?? 8, deps.versions, deps.afterCommit);
    this.users = new UserReconciliation(deps.store, this.writer);
    this.moderation = {
      ...deps,
      writer: this.writer,
      users: this.users,
      carry: new JudgementCarry({ max: CARRIED_JUDGEMENTS, ttlMs: CARRIED_JUDGEMENT_TTL_MS }),
    };
  }

  /** See `moderate.ts`. */
  async moderate(input: ModerateInput): Promise<ModerateResult> {
    const leave = input.content.imageUrls?.length ? undefined : this.deps.textActivity?.enter();
    try {
      return await moderate(this.moderation, input);
    } finally {
      leave?.();
    }
  }

  /** See `moderate.ts`. */
  rerunModeration(input: {
    tenantId: string;
    clientId: string;
    moderationId: string;
    correlationId: string;
    commandId: string;
  }): Promise<boolean> {
    return rerunModeration(this.moderation, input);
  }

  /** See `moderate.ts`: one record of a retroaction. */
  retroact(
    input: { tenantId: string; recordId: string; moderationId: string; correlationId: string; commandId: string },
    options: RetroactOptions,
  ): Promise<RerunOutcome> {
    return retroact(this.moderation, input, options);
  }

  /** See `replay-check.ts`: whether an operator's replay of a dead-lettered command would undo a newer change. */
  checkReplay(command: Command): Promise<ReplayCheck> {
    return checkReplay(this.deps.store, command);
  }

  /** Soft delete; the user's flagged count drops and the user may be reinstated. Deleting twice is a no-op. */
  async deleteRecord(input: {
    tenantId: string;
    clientId: string;
    correlationId: string;
    commandId?: string;
  }): Promise<void> {
    const recordId = recordIdFor(input.tenantId, input.clientId);
    await this.onRecord(input.tenantId, recordId, input.correlationId, {
      type: 'DeleteRecord',
      commandId: input.commandId,
    });
  }

  /** A human decision: sticky, never in test mode, and it drives user automation. */
  async moderateManually(input: {
    tenantId: string;
    recordId: string;
    status: RecordStatus;
    reason: string;
    actor: string;
    correlationId: string;
    /** The caller's id for this decision: one already recorded with it is not recorded again (a form sent twice). */
    moderationId?: string;
    /** The policy the decision rests on (the default policy when absent), and the report it answers. */
    policy?: string;
    notice?: DecisionNotice;
  }): Promise<RecordState> {
    checkLength(input.reason, LIMITS.reason, 'reason');
    const { settings } = await this.deps.tenants.get(input.tenantId);
    return this.onRecord(input.tenantId, input.recordId, input.correlationId, {
      type: 'ModerateRecordManually',
      moderationId: input.moderationId ?? `mod_${ulid()}`,
      status: input.status,
      reason: input.reason,
      actor: input.actor,
      basis: manualBasis(settings, input.policy, input.notice),
    });
  }

  async upsertUser(input: { tenantId: string; user: UserData; correlationId: string }): Promise<UserState> {
    checkUserBounds(input.user);
    if (input.user.metadata) validateMetadata(input.user.metadata, ['metadata']);
    const userId = userIdFor(input.tenantId, input.user.clientId);
    return this.onUser(input.tenantId, userId, input.correlationId, {
      type: 'UpsertUser',
      userId,
      input: input.user,
      passthrough: false,
    });
  }

  async setUserStatus(input: {
    tenantId: string;
    userId: string;
    status: UserStatus;
    reason: string;
    actor: string;
    correlationId: string;
    /** The caller's id for this decision (a report's decision names it); a new one by default. */
    actionId?: string;
    /** The policy the decision rests on (the default policy when absent), and the report it answers. */
    policy?: string;
    notice?: DecisionNotice;
  }): Promise<UserState> {
    checkLength(input.reason, LIMITS.reason, 'reason');
    const { settings } = await this.deps.tenants.get(input.tenantId);
    return this.onUser(input.tenantId, input.userId, input.correlationId, {
      type: 'SetUserStatus',
      actionId: input.actionId ?? `act_${ulid()}`,
      status: input.status,
      reason: input.reason,
      actor: input.actor,
      basis: manualBasis(settings, input.policy, input.notice),
    });
  }

  async createAppeal(input: {
    tenantId: string;
    userId: string;
    text: string;
    correlationId: string;
  }): Promise<string> {
    checkLength(input.text, LIMITS.appealText, 'text');
    const appealId = `apl_${ulid()}`;
    const { settings } = await this.deps.tenants.get(input.tenantId);
    await this.onUser(input.tenantId, input.userId, input.correlationId, {
      type: 'CreateAppeal',
      appealId,
      text: input.text,
      windowDays: settings.appealWindowDays,
    });
    return appealId;
  }

  async decideAppeal(input: {
    tenantId: string;
    appealId: string;
    decision: 'Approved' | 'Rejected';
    reason: string;
    actor: string;
    correlationId: string;
  }): Promise<void> {
    checkLength(input.reason, LIMITS.reason, 'reason');
    const userId = await this.deps.store.appealUser(input.tenantId, input.appealId);
    if (!userId) throw new NotFoundError('appeal not found');
    await this.onUser(input.tenantId, userId, input.correlationId, {
      type: 'DecideAppeal',
      appealId: input.appealId,
      decision: input.decision,
      reason: input.reason,
      actor: input.actor,
      actionId: `act_${ulid()}`,
    });
  }

  /** See `reports.ts`. */
  createReport(input: CreateReportInput): Promise<{ report: ReportState; duplicate: boolean }> {
    return createReport(this.reportDeps(), input);
  }

  /** See `reports.ts`. */
  decideReport(input: {
    tenantId: string;
    reportId: string;
    decision: ReportDecision;
    correlationId: string;
  }): Promise<ReportState> {
    return decideReport(this.reportDeps(), input);
  }

  /** See `reports.ts`. */
  fileComplaint(input: { tenantId: string; reportId: string; text: string; correlationId: string }) {
    return fileComplaint(this.reportDeps(), input);
  }

  /** See `reports.ts`. */
  decideComplaint(input: {
    tenantId: string;
    reportId: string;
    decision: ComplaintDecision;
    correlationId: string;
  }): Promise<ReportState> {
    return decideComplaint(this.reportDeps(), input);
  }

  private reportDeps() {
    return { store: this.deps.store, tenants: this.deps.tenants, writer: this.writer, decisions: this };
  }

  private async onRecord(
    tenantId: string,
    recordId: string,
    correlationId: string,
    command: RecordCommand,
  ): Promise<RecordState> {
    const { store } = this.deps;
    const { settings } = await this.deps.tenants.get(tenantId);
    const context: StageContext = { tenantId, correlationId };
    return this.writer.retrying(async (fresh) => {
      // Load.
      const record = await store.loadRecord(recordId, fresh);
      const before = record.state;
      if (before && before.tenantId !== tenantId) throw new NotFoundError('record not found');
      if (command.type === 'DeleteRecord' && command.commandId && before?.recentCommands.includes(command.commandId)) {
        await store.commit(record);
        if (before.userId) await this.users.reconcile(context, [before.userId], recordId, settings.suspensionThreshold);
        return before;
      }
      // Decide. A person's decision on a user's record carries that user in its webhook view, and when it moves the
      // user's flagged count, the user's decision (suspend, reinstate) is staged in the same commit, as an automatic
      // moderation's is; the reconciliation after the commit still catches concurrent moderations.
      const user =
        command.type === 'ModerateRecordManually' && before?.userId
          ? await store.loadUser(before.userId, fresh)
          : undefined;
      let staged = stageRecord(record, command, context, user?.state);
      let stagedUser: Staged<UserState> | undefined;
      const userId = before?.userId;
      const count =
        user?.state && userId
          ? await flaggedCountAfter(store, tenantId, userId, before, staged.state as RecordState)
          : undefined;
      if (user && count !== undefined) {
        stagedUser = {
          ...stageUser(user, reconcileCommand(count, settings.suspensionThreshold, recordId), context),
          flaggedCount: count,
        };
        staged = stageRecord(record, command, context, stagedUser.state);
      }
      // Commit.
      await this.writer.commit(...(stagedUser ? [stagedUser] : []), staged);
      const after = staged.state as RecordState;
      await this.users.reconcile(context, affectedUsers(before, after), recordId, settings.suspensionThreshold);
      return after;
    });
  }

  private async onUser(
    tenantId: string,
    userId: string,
    correlationId: string,
    command: UserCommand,
  ): Promise<UserState> {
    const { store } = this.deps;
    return this.writer.retrying(async (fresh) => {
      // Load.
      const user = await store.loadUser(userId, fresh);
      if (user.state && user.state.tenantId !== tenantId) throw new NotFoundError('user not found');
      // Decide.
      const staged = stageUser(user, command, { tenantId, correlationId });
      // Commit.
      await this.writer.commit(staged);
      return staged.state as UserState;
    });
  }
}
