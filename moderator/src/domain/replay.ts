import type { DomainEvent, UserData } from '@vigil/proto';
import { decideUser, type UserState } from './user';

/** A replayed command and what it carries to compare with: its id and when the gateway issued it. */
export interface ReplayedCommand {
  id: string;
  /** ISO time; one that does not parse counts as older than every change. */
  issuedAt: string;
}

const issuedAtMs = (command: ReplayedCommand) => {
  const at = Date.parse(command.issuedAt);
  return Number.isNaN(at) ? -Infinity : at;
};

/**
 * The newest change of a record's content (an upsert or a delete) stored after the replayed command was issued, by
 * another command or call: replaying the command would undo it (older name and content over newer ones, or a deleted
 * record back). Moderations are not such changes: a replay leaves a person's decision standing (it is sticky).
 * Times are the gateway's (`issuedAt`) against the moderator's (`occurredAt`): clocks apart by less than the time
 * between two updates of one record do not change the answer.
 */
export function newerRecordChange(events: readonly DomainEvent[], command: ReplayedCommand): DomainEvent | undefined {
  const issued = issuedAtMs(command);
  return events.findLast(
    (event) =>
      (event.type === 'RecordUpserted' || event.type === 'RecordDeleted') &&
      event.data.commandId !== command.id &&
      Date.parse(event.occurredAt) > issued,
  );
}

/**
 * The newest upsert of a user stored after the replayed command was issued, when the command's user data would
 * change the user as it is now (an older email, name or metadata value over a newer one). A replay that would change
 * nothing of the user (the usual case: a user's later records carry the same data) is not held back by the user.
 */
export function newerUserChange(
  events: readonly DomainEvent[],
  state: UserState | null,
  user: UserData,
  command: ReplayedCommand,
): DomainEvent | undefined {
  if (!state) return undefined;
  let changes: boolean;
  try {
    changes = decideUser(state, { type: 'UpsertUser', userId: state._id, input: user, passthrough: false }).length > 0;
  } catch {
    // Refused as it stands (metadata over its bound): the replay would be set aside again, not change anything.
    changes = false;
  }
  if (!changes) return undefined;
  const issued = issuedAtMs(command);
  return events.findLast((event) => event.type === 'UserUpserted' && Date.parse(event.occurredAt) > issued);
}
