import type { ContentData, DomainEvent, UserData } from '@vigil/proto';
import { decideRecord, evolveRecord, type RecordCommand } from './record';
import { newerRecordChange, newerUserChange } from './replay';
import { runStream } from './test-kit';
import { decideUser, evolveUser, type UserCommand, type UserState } from './user';

const content: ContentData = { text: 'hello', imageUrls: [], externalUrls: [] };
const upsert = (commandId: string): RecordCommand => ({
  type: 'UpsertRecord',
  recordId: 'rec_1',
  input: { clientId: 'c1', name: 'n', entity: 'post', content },
  passthrough: false,
  commandId,
});
const moderated = (commandId?: string): RecordCommand => ({
  type: 'ModerateRecord',
  moderationId: `mod_${commandId ?? 'x'}`,
  outcome: { status: 'Compliant', reasons: [], rules: [] },
  testMode: false,
  commandId,
});
const manual: RecordCommand = {
  type: 'ModerateRecordManually',
  moderationId: 'mod_m',
  status: 'Flagged',
  reason: 'r',
  actor: 'alice',
};

/** The events of the commands, the n-th stored at second n of 2026-01-01 (see `runStream`). */
const recordEvents = (commands: RecordCommand[]): DomainEvent[] =>
  runStream('record-rec_1', decideRecord, evolveRecord, commands).events;

const at = (seconds: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, 0, seconds * 1000)).toISOString();

describe('newerRecordChange', () => {
  const upserted = [upsert('cmd_a'), moderated('cmd_a')];
  it.each<[string, RecordCommand[], { id: string; issuedAt: string }, number | undefined]>([
    ['nothing stored after the command was issued', upserted, { id: 'cmd_x', issuedAt: at(2.5) }, undefined],
    ['an upsert of another command after it', [...upserted, upsert('cmd_b')], { id: 'cmd_x', issuedAt: at(2.5) }, 3],
    [
      'the newest of several changes',
      [...upserted, upsert('cmd_b'), { type: 'DeleteRecord' }],
      { id: 'x', issuedAt: at(0) },
      4,
    ],
    ['its own upsert (applied before, or partly)', upserted, { id: 'cmd_a', issuedAt: at(0.5) }, undefined],
    [
      'only moderations after it, a person’s included',
      [...upserted, manual],
      { id: 'cmd_x', issuedAt: at(1.5) },
      undefined,
    ],
    ['an issuedAt that does not parse', upserted, { id: 'cmd_x', issuedAt: 'yesterday' }, 1],
  ])('%s', (_name, commands, command, version) => {
    expect(newerRecordChange(recordEvents(commands), command)?.version).toBe(version);
  });
});

describe('newerUserChange', () => {
  const ann = (email: string): UserData => ({ clientId: 'u1', email });
  /** A user upserted with a@x at second 1, then b@x at second 2. */
  function user(): { events: DomainEvent[]; state: UserState } {
    const upserts = [ann('a@x'), ann('b@x')].map((input): UserCommand => ({
      type: 'UpsertUser',
      userId: 'usr_1',
      input,
      passthrough: false,
    }));
    const { events, state } = runStream('user-usr_1', decideUser, evolveUser, upserts);
    return { events, state: state! };
  }

  it.each<[string, UserData, string, number | undefined]>([
    ['an older value over a newer upsert', ann('a@x'), at(1.5), 2],
    ['the values the user has now', ann('b@x'), at(1.5), undefined],
    ['a value issued after the newest upsert', ann('c@x'), at(3), undefined],
    [
      'metadata past its bound (set aside again, changes nothing)',
      { clientId: 'u1', metadata: manyKeys() },
      at(0),
      undefined,
    ],
  ])('%s', (_name, data, issuedAt, version) => {
    const { events, state } = user();
    expect(newerUserChange(events, state, data, { id: 'cmd_x', issuedAt })?.version).toBe(version);
  });

  it('is nothing for a user not stored yet', () => {
    expect(newerUserChange([], null, ann('a@x'), { id: 'cmd_x', issuedAt: at(0) })).toBeUndefined();
  });
});

function manyKeys(): Record<string, number> {
  return Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i]));
}
