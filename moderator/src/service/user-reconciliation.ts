import { ulid } from '@vigil/proto';
import type { RecordState, RuleFlag } from '../domain/record';
import { stageUser, type StageContext } from '../domain/stream';
import type { RecordBankSuspension, UserCommand, UserState } from '../domain/user';
import type { EventStore } from '../store/event-store';
import type { StreamWriter } from './stream-writer';

export interface ReconcileSettings {
  testMode: boolean;
  suspensionThreshold: number;
}

/**
 * The automatic follow-up of a record change: each user whose flagged count moved is counted again, and the user's
 * stream decides on suspension or reinstatement.
 */
export class UserReconciliation {
  constructor(
    private readonly store: EventStore,
    private readonly writer: StreamWriter,
  ) {}

  /**
   * After a moderation: the users whose flagged count moved are reconciled, or in test mode, which changes no user,
   * only counted (test flags still count towards later decisions, as in Iffy).
   */
  async afterRecordChange(
    context: StageContext,
    before: RecordState | null,
    after: RecordState,
    recordId: string,
    settings: ReconcileSettings,
  ): Promise<void> {
    const affected = affectedUsers(before, after);
    if (!settings.testMode) {
      await this.reconcile(context, affected, recordId, settings.suspensionThreshold, after.flag, after);
      return;
    }
    for (const id of affected) await this.store.flagged.refreshFlaggedCount(context.tenantId, id);
  }

  /** Counts the user's flagged records again: reconciled (see `reconcile`), or in test mode only counted. */
  async recount(
    context: StageContext,
    userId: string,
    viaRecordId: string,
    settings: ReconcileSettings,
  ): Promise<void> {
    if (settings.testMode) await this.store.flagged.refreshFlaggedCount(context.tenantId, userId);
    else await this.reconcile(context, [userId], viaRecordId, settings.suspensionThreshold);
  }

  /**
   * Counts each user's flagged records and lets the user stream decide on suspension or reinstatement. A user the
   * projection does not hold is read past it before being taken as absent: the projection of a user stream whose
   * events are stored may have failed.
   */
  async reconcile(
    context: StageContext,
    userIds: string[],
    viaRecordId: string,
    threshold: number,
    viaFlag?: RuleFlag | null,
    /** Record `viaRecordId` as the change left it, when the caller has it. */
    via?: RecordState,
  ): Promise<void> {
    for (const userId of userIds) {
      const flaggedCount = await this.store.flagged.refreshFlaggedCount(context.tenantId, userId);
      await this.writer.retrying(async (fresh) => {
        let user = await this.store.streams.loadUser(userId, fresh);
        if (!user.state && !fresh) user = await this.store.streams.loadUser(userId, true);
        if (!user.state) return;
        const bank = via
          ? await bankSuspensionAfter(this.store, context.tenantId, userId, user.state, via, flaggedCount, threshold)
          : mayReinstate(user.state, flaggedCount, threshold)
            ? await this.store.flagged.findBankSuspension(context.tenantId, userId)
            : undefined;
        const command = reconcileCommand(flaggedCount, threshold, viaRecordId, viaFlag, bank);
        const staged = stageUser(user, command, context);
        await this.writer.commit(staged);
      });
    }
  }
}

/**
 * The user stream's decision on suspension or reinstatement at `flaggedCount`, caused by record `viaRecordId`;
 * `bank`: a flagged record of the user's whose flag came from a `flag_and_suspend` bank, if there is one.
 */
export function reconcileCommand(
  flaggedCount: number,
  threshold: number,
  viaRecordId: string,
  viaFlag?: RuleFlag | null,
  bank?: RecordBankSuspension,
): UserCommand {
  return {
    type: 'ReconcileUser',
    actionId: `act_${ulid()}`,
    flaggedCount,
    threshold,
    viaRecordId,
    viaFlag,
    ...(bank ? { bankSuspension: bank } : {}),
  };
}

/**
 * Before a commit that stores record `before` as `after`: when that moves the user's flagged count, the count with
 * this change applied (the projection still holds `before`), so that the user's decision can be staged in the same
 * commit (the record's webhook then shows the user as the change left them). Undefined when the count does not move.
 * Only reads: the count is stored with that commit (Loaded.flaggedCount), and the reconciliation after it counts again.
 */
export async function flaggedCountAfter(
  store: EventStore,
  tenantId: string,
  userId: string,
  before: RecordState | null,
  after: RecordState,
): Promise<number | undefined> {
  if (after.userId !== userId || !affectedUsers(before, after).includes(userId)) return undefined;
  const counts = (state: RecordState | null) => (countsAsFlagged(state) && state.userId === userId ? 1 : 0);
  const stored = await store.flagged.countFlagged(tenantId, userId);
  return Math.max(0, stored - counts(before) + counts(after));
}

/**
 * Before a commit that stores a record as `after`, which leaves `user` at `flaggedCount`: a flagged record of the
 * user's whose flag came from a `flag_and_suspend` bank once that commit is stored (`after` itself, else one the
 * projection holds). The projection is read only when the decision may be a reinstatement, which such a record holds
 * off. Only reads.
 */
export async function bankSuspensionAfter(
  store: EventStore,
  tenantId: string,
  userId: string,
  user: UserState | null | undefined,
  after: RecordState,
  flaggedCount: number,
  threshold: number,
): Promise<RecordBankSuspension | undefined> {
  if (suspendsUser(after) && after.userId === userId) return { ...after.suspendsUser, recordId: after._id };
  if (!user || !mayReinstate(user, flaggedCount, threshold)) return undefined;
  return store.flagged.findBankSuspension(tenantId, userId, after._id);
}

/**
 * Whether the user's decision at `flaggedCount` may be a reinstatement: only then can a standing bank flag on another
 * record change it (while one stands, the automatic suspension it caused stands too).
 */
function mayReinstate(user: UserState, flaggedCount: number, threshold: number): boolean {
  return flaggedCount < threshold && user.status === 'Suspended' && !user.manual && !user.protected;
}

/** Whether a record's flag, standing, came from a `flag_and_suspend` bank. */
const suspendsUser = (
  state: RecordState | null,
): state is RecordState & { suspendsUser: NonNullable<RecordState['suspendsUser']> } =>
  countsAsFlagged(state) && state.suspendsUser !== undefined;

/** Whether a record counts towards its user's flagged count. */
const countsAsFlagged = (state: RecordState | null): state is RecordState =>
  !!state && !state.deleted && state.status === 'Flagged';

/** Users whose flagged count, or whose bank suspension, a record change may have moved. */
export function affectedUsers(before: RecordState | null, after: RecordState): string[] {
  const users = new Set<string>();
  if (before?.userId && countsAsFlagged(before) && (before.userId !== after.userId || !countsAsFlagged(after)))
    users.add(before.userId);
  if (after.userId && countsAsFlagged(after) && (before?.userId !== after.userId || !countsAsFlagged(before)))
    users.add(after.userId);
  // A bank's suspending flag that comes or goes moves the user's decision even when the count stays.
  if (before?.userId && suspendsUser(before) && !suspendsUser(after)) users.add(before.userId);
  if (after.userId && suspendsUser(after) && !suspendsUser(before)) users.add(after.userId);
  return [...users];
}
