import {
  recordIdFor,
  type DomainEvent,
  userIdFor,
  type ContentData,
  type RecordStatus,
  type UserData,
  type UserStatus,
} from '@vigil/proto';
import type { Logger } from 'pino';
import { ulid } from 'ulid';
import { ProviderError, type EngineResult, type ModerationEngine, type PriorDecision } from '../engine';
import { LIMITS, checkLength, checkRecordBounds, checkUserBounds } from '../domain/bounds';
import { ConflictError, NotFoundError, UnavailableError } from '../domain/errors';
import { mergeMetadata, validateMetadata, type Metadata } from '../domain/metadata';
import type { RecordCommand, RecordState } from '../domain/record';
import { stageRecord, stageUser, type Loaded, type StageContext } from '../domain/stream';
import type { UserCommand, UserState } from '../domain/user';
import { StreamConflict, type EventStore } from '../store/event-store';
import type { TenantConfigCache } from '../store/tenant-config';

export interface ModerateInput {
  tenantId: string;
  correlationId: string;
  clientId: string;
  clientUrl?: string;
  name: string;
  entity: string;
  content: ContentData;
  metadata?: Metadata;
  user?: UserData;
  passthrough: boolean;
  /** Set for ingest commands: a command id is applied once. */
  commandId?: string;
  /**
   * Ingest roll-out (Iffy §4.8): false when the sampling skipped the record, which is then stored and moderated only
   * if it is Flagged or its user Suspended. Default true.
   */
  sampled?: boolean;
  /** Id for the moderation (the gateway's, so its answer names it); a fresh one by default. */
  moderationId?: string;
}

export interface ModerateResult {
  recordId: string;
  status: RecordStatus;
  moderationId: string;
  userId?: string;
  flagged: boolean;
  reasons: string[];
  rules: string[];
  testMode: boolean;
  /** The command had been applied before; nothing new was stored. */
  duplicate: boolean;
  /** Stored without a moderation (roll-out sampling). */
  skipped?: boolean;
}

export interface ServiceDeps {
  store: EventStore;
  engine: ModerationEngine;
  tenants: TenantConfigCache;
  log: Logger;
  /** Called with the events a commit appended, so the outbox relay publishes them without reading them back. */
  onAppend: (events: DomainEvent[]) => void;
  /** Attempts of one decision under concurrent writers before giving up with ConflictError. */
  maxAttempts?: number;
}

const prefixed = (prefix: string) => `${prefix}_${ulid()}`;

/**
 * Reasons without the matched text after `: ` (blocked word, pattern, domain): stored for passthrough records, whose
 * content must leave no trace, not even the word that matched.
 */
export function withoutDetails(reasons: string[]): string[] {
  return [...new Set(reasons.map((reason) => reason.split(': ')[0] ?? reason))];
}

/**
 * The moderator's use cases, each as load → decide → commit: load the streams, decide and stage their events in the
 * domain, commit them (one append, then the projections) with optimistic concurrency, re-reading and deciding again
 * on a conflict; then the automatic user follow-ups. Throws AppErrors only.
 */
export class ModerationService {
  private readonly maxAttempts: number;

  constructor(private readonly deps: ServiceDeps) {
    this.maxAttempts = deps.maxAttempts ?? 8;
  }

  /**
   * Upserts the user and the record, runs the engine on name, text and the merged metadata, and stores the result.
   * Every call moderates again, ingest included (no content hash: a changed rule set must apply to re-sent content).
   */
  async moderate(input: ModerateInput): Promise<ModerateResult> {
    checkRecordBounds({
      clientId: input.clientId,
      clientUrl: input.clientUrl,
      name: input.name,
      entity: input.entity,
      content: input.content,
      metadata: input.metadata,
      user: input.user,
    });
    if (input.metadata) validateMetadata(input.metadata, 'metadata');
    if (input.user?.metadata) validateMetadata(input.user.metadata, 'user.metadata');
    const { store } = this.deps;
    const recordId = recordIdFor(input.tenantId, input.clientId);
    const userId = input.user ? userIdFor(input.tenantId, input.user.clientId) : undefined;
    const { settings, rules } = await this.deps.tenants.get(input.tenantId);
    const testMode = settings.testMode;
    const moderationId = input.moderationId ?? prefixed('mod');
    let judged: { key: string; result: EngineResult } | undefined;

    const context: StageContext = { tenantId: input.tenantId, correlationId: input.correlationId };
    return this.retrying(async (fresh) => {
      // Load.
      const [record, user] = await Promise.all([
        store.loadRecord(recordId, fresh),
        userId ? store.loadUser(userId, fresh) : Promise.resolve(undefined),
      ]);
      const before = record.state;

      if (input.commandId && before?.recentCommands.includes(input.commandId)) {
        // Applied before: only what a crash may have left unprojected is written.
        await store.commit(record, ...(user ? [user] : []));
        if (before.userId && !testMode)
          await this.reconcileUsers(context, [before.userId], recordId, settings.suspensionThreshold);
        return resultOf(before, testMode, true);
      }

      // Decide. Iffy §4.8: a record the sampling skipped is still moderated when it is Flagged (a fixed record can
      // become Compliant and reinstate its user) or its user is Suspended.
      const moderateNow =
        input.sampled !== false ||
        (before !== null && !before.deleted && before.status === 'Flagged') ||
        user?.state?.status === 'Suspended';
      const metadata = mergeMetadata(before?.metadata, input.metadata);
      const prior: PriorDecision | undefined =
        before?.manual && before.status ? { status: before.status, reason: before.manualReason } : undefined;
      // Judged again only when what the engine sees changed under a concurrent writer (metadata, human decision).
      const judgedKey = JSON.stringify([metadata ?? null, prior ?? null]);
      if (moderateNow && judged?.key !== judgedKey) {
        judged = { key: judgedKey, result: await this.judge(input, metadata, rules, prior) };
      }
      const stagedUser =
        user && input.user && userId
          ? stageUser(user, { type: 'UpsertUser', userId, input: input.user, passthrough: input.passthrough }, context)
          : undefined;
      const upserted = stageRecord(
        record,
        {
          type: 'UpsertRecord',
          recordId,
          input: {
            clientId: input.clientId,
            clientUrl: input.clientUrl,
            name: input.name,
            entity: input.entity,
            content: input.content,
            metadata: input.metadata,
            userId,
          },
          passthrough: input.passthrough,
          commandId: input.commandId,
        },
        context,
      );
      const outcome = moderateNow ? judged?.result : undefined;
      const staged = outcome
        ? stageRecord(
            upserted,
            {
              type: 'ModerateRecord',
              moderationId,
              outcome: input.passthrough ? { ...outcome, reasons: withoutDetails(outcome.reasons) } : outcome,
              testMode,
              commandId: input.commandId,
            },
            context,
          )
        : upserted;

      // Commit.
      await this.commit(...(stagedUser ? [stagedUser] : []), staged);
      const after = staged.state as RecordState;
      // No moderation, so no status moved: no user to reconcile.
      if (!outcome) return { ...resultOf(after, testMode, false), moderationId: '', skipped: true };
      await this.afterRecordChange(context, before, after, recordId, settings);
      return { ...resultOf(after, testMode, false), reasons: outcome.reasons };
    });
  }

  /**
   * Bulk re-run (Iffy's "Re-run moderation"): moderates the stored record again with the tenant's current rules.
   * Returns false, storing nothing, when there is nothing to judge: the record is gone, deleted or passthrough (its
   * content was never kept).
   */
  async rerunModeration(input: {
    tenantId: string;
    clientId: string;
    moderationId: string;
    correlationId: string;
    commandId: string;
  }): Promise<boolean> {
    const { store } = this.deps;
    const recordId = recordIdFor(input.tenantId, input.clientId);
    const { settings, rules } = await this.deps.tenants.get(input.tenantId);
    const context: StageContext = { tenantId: input.tenantId, correlationId: input.correlationId };
    return this.retrying(async (fresh) => {
      const record = await store.loadRecord(recordId, fresh);
      const before = record.state;
      if (!before || before.tenantId !== input.tenantId || before.deleted || before.passthrough || !before.content)
        return false;
      if (before.recentCommands.includes(input.commandId)) return true;
      const outcome = await this.judge(
        {
          tenantId: input.tenantId,
          correlationId: input.correlationId,
          clientId: before.clientId,
          name: before.name ?? '',
          entity: before.entity,
          content: before.content,
          passthrough: false,
        },
        before.metadata,
        rules,
        before.manual && before.status ? { status: before.status, reason: before.manualReason } : undefined,
      );
      const staged = stageRecord(
        record,
        {
          type: 'ModerateRecord',
          moderationId: input.moderationId,
          outcome,
          testMode: settings.testMode,
          commandId: input.commandId,
        },
        context,
      );
      await this.commit(staged);
      await this.afterRecordChange(context, before, staged.state as RecordState, recordId, settings);
      return true;
    });
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
  }): Promise<RecordState> {
    checkLength(input.reason, LIMITS.reason, 'reason');
    return this.onRecord(input.tenantId, input.recordId, input.correlationId, {
      type: 'ModerateRecordManually',
      moderationId: prefixed('mod'),
      status: input.status,
      reason: input.reason,
      actor: input.actor,
    });
  }

  async upsertUser(input: { tenantId: string; user: UserData; correlationId: string }): Promise<UserState> {
    checkUserBounds(input.user);
    if (input.user.metadata) validateMetadata(input.user.metadata, 'metadata');
    const userId = userIdFor(input.tenantId, input.user.clientId);
    return this.onUser(input.tenantId, userId, input.correlationId, {
      type: 'UpsertUser',
      userId,
      input: input.user,
      passthrough: false,
    });
  }

  setUserStatus(input: {
    tenantId: string;
    userId: string;
    status: UserStatus;
    reason: string;
    actor: string;
    correlationId: string;
  }): Promise<UserState> {
    checkLength(input.reason, LIMITS.reason, 'reason');
    return this.onUser(input.tenantId, input.userId, input.correlationId, {
      type: 'SetUserStatus',
      actionId: prefixed('act'),
      status: input.status,
      reason: input.reason,
      actor: input.actor,
    });
  }

  async createAppeal(input: {
    tenantId: string;
    userId: string;
    text: string;
    correlationId: string;
  }): Promise<string> {
    checkLength(input.text, LIMITS.appealText, 'text');
    const appealId = prefixed('apl');
    await this.onUser(input.tenantId, input.userId, input.correlationId, {
      type: 'CreateAppeal',
      appealId,
      text: input.text,
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
      actionId: prefixed('act'),
    });
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
    return this.retrying(async (fresh) => {
      const record = await store.loadRecord(recordId, fresh);
      const before = record.state;
      if (before && before.tenantId !== tenantId) throw new NotFoundError('record not found');
      if (command.type === 'DeleteRecord' && command.commandId && before?.recentCommands.includes(command.commandId)) {
        await store.commit(record);
        if (before.userId) await this.reconcileUsers(context, [before.userId], recordId, settings.suspensionThreshold);
        return before;
      }
      const staged = stageRecord(record, command, context);
      await this.commit(staged);
      const after = staged.state as RecordState;
      await this.reconcileUsers(context, affectedUsers(before, after), recordId, settings.suspensionThreshold);
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
    return this.retrying(async (fresh) => {
      const user = await store.loadUser(userId, fresh);
      if (user.state && user.state.tenantId !== tenantId) throw new NotFoundError('user not found');
      const staged = stageUser(user, command, { tenantId, correlationId });
      await this.commit(staged);
      return staged.state as UserState;
    });
  }

  /** Commits staged streams and wakes the outbox relay when events were appended. */
  private async commit(...streams: Loaded<RecordState | UserState>[]): Promise<void> {
    let appended: DomainEvent[];
    try {
      appended = await this.deps.store.commit(...streams);
    } catch (err) {
      if (err instanceof StreamConflict && err.appended.length > 0) this.deps.onAppend(err.appended);
      throw err;
    }
    if (appended.length > 0) this.deps.onAppend(appended);
  }

  /**
   * After a moderation: the users whose flagged count moved are reconciled, or in test mode, which changes no user,
   * only counted (test flags still count towards later decisions, as in Iffy).
   */
  private async afterRecordChange(
    context: StageContext,
    before: RecordState | null,
    after: RecordState,
    recordId: string,
    settings: { testMode: boolean; suspensionThreshold: number },
  ): Promise<void> {
    const affected = affectedUsers(before, after);
    if (!settings.testMode) {
      await this.reconcileUsers(context, affected, recordId, settings.suspensionThreshold);
      return;
    }
    for (const id of affected) await this.deps.store.refreshFlaggedCount(context.tenantId, id);
  }

  /** Counts each user's flagged records and lets the user stream decide on suspension or reinstatement. */
  private async reconcileUsers(
    context: StageContext,
    userIds: string[],
    viaRecordId: string,
    threshold: number,
  ): Promise<void> {
    const { store } = this.deps;
    for (const userId of userIds) {
      const flaggedCount = await store.refreshFlaggedCount(context.tenantId, userId);
      await this.retrying(async (fresh) => {
        const user = await store.loadUser(userId, fresh);
        if (!user.state) return;
        const staged = stageUser(
          user,
          { type: 'ReconcileUser', actionId: prefixed('act'), flaggedCount, threshold, viaRecordId },
          context,
        );
        await this.commit(staged);
      });
    }
  }

  private async judge(
    input: ModerateInput,
    metadata: Metadata | undefined,
    rules: Parameters<ModerationEngine['moderate']>[1],
    prior: PriorDecision | undefined,
  ): Promise<EngineResult> {
    try {
      return await this.deps.engine.moderate(
        {
          entity: input.entity,
          name: input.name,
          text: input.content.text,
          imageUrls: input.content.imageUrls,
          externalUrls: input.content.externalUrls,
          metadata,
          tenantId: input.tenantId,
          prior,
        },
        rules,
      );
    } catch (err) {
      // A provider that fails, even "permanently" (bad key), is an operator problem: callers retry, nothing is dropped.
      if (err instanceof ProviderError)
        throw new UnavailableError('moderation provider unavailable', { retriable: err.retriable }, { cause: err });
      throw err;
    }
  }

  private async retrying<T>(attempt: (fresh: boolean) => Promise<T>): Promise<T> {
    for (let index = 0; ; index += 1) {
      try {
        return await attempt(index > 0);
      } catch (err) {
        if (!(err instanceof StreamConflict) || index + 1 >= this.maxAttempts) {
          if (err instanceof StreamConflict) {
            throw new ConflictError('too many concurrent writes to the same record or user; try again');
          }
          throw err;
        }
      }
    }
  }
}

/** Users whose flagged count a record change may have moved. */
function affectedUsers(before: RecordState | null, after: RecordState): string[] {
  const flagged = (state: RecordState | null) => !!state && !state.deleted && state.status === 'Flagged';
  const users = new Set<string>();
  if (before?.userId && flagged(before) && (before.userId !== after.userId || !flagged(after)))
    users.add(before.userId);
  if (after.userId && flagged(after) && (before?.userId !== after.userId || !flagged(before))) users.add(after.userId);
  return [...users];
}

function resultOf(state: RecordState, testMode: boolean, duplicate: boolean): ModerateResult {
  const status = state.status ?? 'Compliant';
  return {
    recordId: state._id,
    status,
    moderationId: state.moderationId ?? '',
    userId: state.userId,
    flagged: status === 'Flagged',
    reasons: state.reasons,
    rules: state.rules,
    testMode,
    duplicate,
  };
}
