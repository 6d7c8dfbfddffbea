import { recordIdFor, ulid, type DecisionNotice, type RecordStatus } from '@vigil/proto';
import { LIMITS, checkLength } from '../domain/bounds';
import { manualBasis } from '../domain/decision-basis';
import { NotFoundError } from '../domain/errors';
import type { RecordCommand, RecordState } from '../domain/record';
import { stageRecord, stageUser, type StageContext, type Staged } from '../domain/stream';
import type { UserState } from '../domain/user';
import { finishAppliedCommand } from './applied-command';
import type { UseCases } from './use-cases';
import { affectedUsers, bankSuspensionAfter, flaggedCountAfter, reconcileCommand } from './user-reconciliation';

// People's decisions on one record, as load → decide → commit (see use-cases.ts).

/** Soft delete; the user's flagged count drops and the user may be reinstated. Deleting twice is a no-op. */
export async function deleteRecord(
  deps: UseCases,
  input: {
    tenantId: string;
    clientId: string;
    correlationId: string;
    commandId?: string;
  },
): Promise<void> {
  const recordId = recordIdFor(input.tenantId, input.clientId);
  await onRecord(deps, input.tenantId, recordId, input.correlationId, {
    type: 'DeleteRecord',
    commandId: input.commandId,
  });
}

/** A human decision: sticky, never in test mode, and it drives user automation. */
export async function moderateManually(
  deps: UseCases,
  input: {
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
  },
): Promise<RecordState> {
  checkLength(input.reason, LIMITS.reason, 'reason');
  const { settings } = await deps.tenants.get(input.tenantId);
  return onRecord(deps, input.tenantId, input.recordId, input.correlationId, {
    type: 'ModerateRecordManually',
    moderationId: input.moderationId ?? `mod_${ulid()}`,
    status: input.status,
    reason: input.reason,
    actor: input.actor,
    basis: manualBasis(settings, input.policy, input.notice),
  });
}

async function onRecord(
  deps: UseCases,
  tenantId: string,
  recordId: string,
  correlationId: string,
  command: RecordCommand,
): Promise<RecordState> {
  const { store } = deps;
  const { settings } = await deps.tenants.get(tenantId);
  const context: StageContext = { tenantId, correlationId };
  return deps.writer.retrying(async (fresh) => {
    // Load.
    const record = await store.streams.loadRecord(recordId, fresh);
    const before = record.state;
    if (before && before.tenantId !== tenantId) throw new NotFoundError('record not found');
    if (command.type === 'DeleteRecord' && command.commandId && before?.recentCommands.includes(command.commandId)) {
      // Reconciled in test mode too, as this path's commit below does.
      const reconciled = { ...settings, testMode: false };
      const applied = await finishAppliedCommand(
        deps,
        context,
        reconciled,
        { recordId },
        fresh ? { record } : undefined,
      );
      return applied ?? before;
    }
    // Decide. A person's decision on a user's record carries that user in its webhook view, and when it moves the
    // user's flagged count, the user's decision (suspend, reinstate) is staged in the same commit, as an automatic
    // moderation's is; the reconciliation after the commit still catches concurrent moderations.
    const user =
      command.type === 'ModerateRecordManually' && before?.userId
        ? await store.streams.loadUser(before.userId, fresh)
        : undefined;
    let staged = stageRecord(record, command, context, user?.state);
    let stagedUser: Staged<UserState> | undefined;
    const userId = before?.userId;
    const count =
      user?.state && userId
        ? await flaggedCountAfter(store, tenantId, userId, before, staged.state as RecordState)
        : undefined;
    if (user && userId && count !== undefined) {
      const threshold = settings.suspensionThreshold;
      const after = staged.state as RecordState;
      const bank = await bankSuspensionAfter(store, tenantId, userId, user.state, after, count, threshold);
      stagedUser = {
        ...stageUser(user, reconcileCommand(count, threshold, recordId, undefined, bank), context),
        flaggedCount: count,
      };
      staged = stageRecord(record, command, context, stagedUser.state);
    }
    // Commit.
    await deps.writer.commit(...(stagedUser ? [stagedUser] : []), staged);
    const after = staged.state as RecordState;
    await deps.users.reconcile(context, affectedUsers(before, after), recordId, settings.suspensionThreshold);
    return after;
  });
}
