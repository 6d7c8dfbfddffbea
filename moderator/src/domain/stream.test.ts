import { decodeTime, encodeTime } from 'ulid';
import { stageRecord, stageUser, type Loaded } from './stream';
import type { RecordState } from './record';
import type { UserState } from './user';

const context = { tenantId: 'ten_1', correlationId: 'corr_1' };
const empty: Loaded<RecordState> = {
  kind: 'record',
  stream: 'record-rec_1',
  state: null,
  tail: [],
  events: [],
  created: true,
};
const upsert = {
  type: 'UpsertRecord' as const,
  recordId: 'rec_1',
  input: { clientId: 'c1', name: 'Title', entity: 'post', content: { text: 'hi', imageUrls: [], externalUrls: [] } },
  passthrough: false,
};
const moderate = {
  type: 'ModerateRecord' as const,
  moderationId: 'mod_1',
  outcome: { status: 'Flagged' as const, reasons: ['r'], rules: ['x'] },
  testMode: false,
};

describe('staging events on a stream', () => {
  it('numbers the versions of chained commands in order and keeps the state the stream was loaded with', () => {
    const upserted = stageRecord(empty, upsert, context);
    const moderated = stageRecord(upserted, moderate, context);
    expect(moderated.events.map((event) => [event.type, event.version])).toEqual([
      ['RecordUpserted', 1],
      ['RecordModerated', 2],
    ]);
    expect(moderated.events.every((event) => event.stream === 'record-rec_1' && event.tenantId === 'ten_1')).toBe(true);
    expect(moderated.state?.version).toBe(2);
    expect(moderated.state?.status).toBe('Flagged');
    expect(moderated.created).toBe(true);
    expect(moderated.events[0]!.id < moderated.events[1]!.id).toBe(true);
  });

  it("gives ids after the stream's newest event even when this clock is behind", () => {
    const stored = stageRecord(empty, upsert, context);
    const ahead = Date.now() + 60_000;
    // The newest event's id as if written by a host one minute ahead.
    const lastEventId = encodeTime(ahead, 10) + stored.events[0]!.id.slice(10);
    const state = { ...(stored.state as RecordState), lastEventId };
    const next = stageRecord({ ...empty, state, created: false }, moderate, context);
    expect(decodeTime(next.events[0]!.id)).toBeGreaterThan(ahead);
    expect(next.events[0]!.version).toBe(2);
    expect(next.created).toBe(false);
  });

  it('stages nothing when the decision has no events', () => {
    const upserted = stageRecord(empty, { ...upsert, commandId: 'cmd_1' }, context);
    const loaded: Loaded<RecordState> = { ...empty, state: upserted.state, created: false };
    const again = stageRecord(loaded, { ...upsert, commandId: 'cmd_1' }, context);
    expect(again.events).toEqual([]);
    expect(again.state).toBe(loaded.state);
  });
});

describe("the webhook's view on moderation and status events", () => {
  const emptyUser: Loaded<UserState> = {
    kind: 'user',
    stream: 'user-usr_1',
    state: null,
    tail: [],
    events: [],
    created: true,
  };
  const upsertUser = {
    type: 'UpsertUser' as const,
    userId: 'usr_1',
    input: { clientId: 'u1', email: 'ann@example.com', name: 'Ann', protected: true, metadata: { tier: 'gold' } },
    passthrough: false,
  };
  const withUser = {
    ...upsert,
    input: { ...upsert.input, userId: 'usr_1', clientUrl: 'https://x', metadata: { a: 1 } },
  };

  it('puts the record, and the user it was staged with, on the moderation, without the user’s email or name', () => {
    const user = stageUser(emptyUser, upsertUser, context);
    const moderated = stageRecord(stageRecord(empty, withUser, context), moderate, context, user.state);
    const [upserted, event] = moderated.events;
    expect(upserted!.type).toBe('RecordUpserted');
    expect((upserted!.data as { view?: unknown }).view).toBeUndefined();
    expect(event!.type === 'RecordModerated' && event.data.view).toEqual({
      clientId: 'c1',
      clientUrl: 'https://x',
      name: 'Title',
      entity: 'post',
      protected: false,
      metadata: { a: 1 },
      user: { clientId: 'u1', protected: true, metadata: { tier: 'gold' } },
    });
    expect(JSON.stringify(event)).not.toMatch(/ann@example\.com|"Ann"/);
  });

  it('leaves the user out when the one given is not the record’s, and the name out for a passthrough record', () => {
    const other = stageUser(emptyUser, { ...upsertUser, userId: 'usr_2' }, context);
    const passthrough = stageRecord(empty, { ...withUser, passthrough: true }, context);
    const moderated = stageRecord(passthrough, moderate, context, other.state);
    const event = moderated.events[1]!;
    expect(event.type === 'RecordModerated' && event.data.view).toEqual({
      clientId: 'c1',
      clientUrl: 'https://x',
      entity: 'post',
      protected: false,
      metadata: { a: 1 },
    });
  });

  it('puts the user on a status change', () => {
    const user = stageUser(emptyUser, { ...upsertUser, input: { ...upsertUser.input, protected: false } }, context);
    const suspended = stageUser(
      user,
      { type: 'SetUserStatus', actionId: 'act_1', status: 'Suspended', reason: 'r', actor: 'm' },
      context,
    );
    const event = suspended.events[1]!;
    expect(event.type === 'UserStatusChanged' && event.data.view).toEqual({
      clientId: 'u1',
      protected: false,
      metadata: { tier: 'gold' },
    });
  });
});
