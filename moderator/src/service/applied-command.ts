import type { RecordState } from '../domain/record';
import type { Loaded, StageContext } from '../domain/stream';
import type { UserState } from '../domain/user';
import type { EventStore } from '../store/event-store';
import type { ReconcileSettings, UserReconciliation } from './user-reconciliation';

/**
 * Finishes a record command found applied already (its id among the record's recent commands). Its events are
 * stored, but the failure that made it run again may have come after the append: before the projections or the
 * user's decision were written. A load from the projections alone cannot tell (the record's may be current and the
 * user's stale), so the streams are read past their projections, unless the caller's `loaded` were, and what they
 * hold is projected. Then the record's user is counted again: reconciled, or in test mode only counted. Returns the
 * record as its stream holds it.
 */
export async function finishAppliedCommand(
  deps: { store: EventStore; users: UserReconciliation },
  context: StageContext,
  settings: ReconcileSettings,
  ids: { recordId: string; userId?: string },
  loaded?: { record: Loaded<RecordState>; user?: Loaded<UserState> },
): Promise<RecordState | null> {
  const { record, user } = loaded ?? (await deps.store.loadRecordAndUser(ids.recordId, ids.userId, true));
  await deps.store.commit(record, ...(user ? [user] : []));
  const owner = record.state?.userId;
  if (owner) await deps.users.recount(context, owner, ids.recordId, settings);
  return record.state;
}
