import { ulid } from '@vigil/proto';
import type { RecordState, RuleFlag } from '../domain/record';
import { stageUser, type StageContext } from '../domain/stream';
import type { UserCommand } from '../domain/user';
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
      await this.reconcile(context, affected, recordId, settings.suspensionThreshold, after.flag);
      return;
    }
    for (const id of affected) await this.store.flagged.refreshFlaggedCount(context.tenantId, id);
  }

  /** Counts each user's flagged records and lets the user stream decide on suspension or reinstatement. */
  async reconcile(
    context: StageContext,
    userIds: string[],
    viaRecordId: string,
    threshold: number,
    viaFlag?: RuleFlag | null,
  ): Promise<void> {
    for (const userId of userIds) {
      const flaggedCount = await this.store.flagged.refreshFlaggedCount(context.tenantId, userId);
      await this.writer.retrying(async (fresh) => {
        const user = await this.store.streams.loadUser(userId, fresh);
        if (!user.state) return;
        const staged = stageUser(user, reconcileCommand(flaggedCount, threshold, viaRecordId, viaFlag), context);
        await this.writer.commit(staged);
      });
    }
  }
}

/** The user stream's decision on suspension or reinstatement at `flaggedCount`, caused by record `viaRecordId`. */
export function reconcileCommand(
  flaggedCount: number,
  threshold: number,
  viaRecordId: string,
  viaFlag?: RuleFlag | null,
): UserCommand {
  return { type: 'ReconcileUser', actionId: `act_${ulid()}`, flaggedCount, threshold, viaRecordId, viaFlag };
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

/** Whether a record counts towards its user's flagged count. */
export const countsAsFlagged = (state: RecordState | null): state is RecordState =>
  !!state && !state.deleted && state.status === 'Flagged';

/** Users whose flagged count a record change may have moved. */
export function affectedUsers(before: RecordState | null, after: RecordState): string[] {
  const users = new Set<string>();
  if (before?.userId && countsAsFlagged(before) && (before.userId !== after.userId || !countsAsFlagged(after)))
    users.add(before.userId);
  if (after.userId && countsAsFlagged(after) && (before?.userId !== after.userId || !countsAsFlagged(before)))
    users.add(after.userId);
  return [...users];
}
