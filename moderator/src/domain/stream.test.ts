import { decodeTime, encodeTime } from 'ulid';
import { stageRecord, type Loaded } from './stream';
import type { RecordState } from './record';

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
