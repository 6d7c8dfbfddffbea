import { recordIdFor, userIdFor, type Command, type UserData } from '@vigil/proto';
import { recordStream, userStream } from '../domain/stream-names';
import { newerRecordChange, newerUserChange } from '../domain/replay';
import type { EventStore } from '../store/event-store';

/**
 * What replaying a dead-lettered command would do now: `applied`, it was applied already (its id is among the ones
 * its record remembers), so a replay changes nothing; `newer`, a change stored after the command was issued would be
 * undone (named without content: stream, event type and version, time); `ok`, it applies as it would have.
 */
export type ReplayCheck =
  | { kind: 'ok' }
  | { kind: 'applied' }
  | { kind: 'newer'; stream: string; type: string; version: number; occurredAt: string };

/**
 * Checks a replay against the record's and the user's streams. Reads a whole stream (by its indexed `stream` field):
 * only operator replays come here, not the ingest path.
 */
export async function checkReplay(store: EventStore, command: Command): Promise<ReplayCheck> {
  const { tenantId } = command;
  let user: UserData | undefined;
  switch (command.type) {
    case 'IngestUser':
      user = command.data;
      break;
    case 'IngestRecord':
    case 'DeleteRecord':
    case 'RerunModeration': {
      const recordId = recordIdFor(tenantId, command.data.clientId);
      const record = (await store.streams.loadRecord(recordId, true)).state;
      if (record?.recentCommands.includes(command.id)) return { kind: 'applied' };
      // A re-run moderates the record as it is now, with the rules of now: nothing it could undo.
      if (command.type === 'RerunModeration') return { kind: 'ok' };
      if (record) {
        const newer = newerRecordChange(await store.streams.readStream(recordStream(recordId), tenantId), command);
        if (newer) return newerOf(newer);
      }
      if (command.type === 'IngestRecord') user = command.data.user;
      break;
    }
  }
  if (user) {
    const userId = userIdFor(tenantId, user.clientId);
    const state = (await store.streams.loadUser(userId, true)).state;
    if (state) {
      const newer = newerUserChange(await store.streams.readStream(userStream(userId), tenantId), state, user, command);
      if (newer) return newerOf(newer);
    }
  }
  return { kind: 'ok' };
}

const newerOf = (event: { stream: string; type: string; version: number; occurredAt: string }): ReplayCheck => ({
  kind: 'newer',
  stream: event.stream,
  type: event.type,
  version: event.version,
  occurredAt: event.occurredAt,
});
