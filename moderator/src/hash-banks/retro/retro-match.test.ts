import { DEFAULT_SETTINGS, type DomainEvent, type HashMatchRecord } from '@vigil/proto';
import { hashReason } from '../bank-rules';
import { DEFAULT_RULES } from '@vigil/proto/rules';
import type { RecordState } from '../../domain/record';
import { stageRecord, type Loaded } from '../../domain/stream';
import { retroMatch, type RetroMatchInput } from './retro-match';

const TENANT = 'ten_1';
const RECORD = 'rec_1';
const IMAGE = { position: 1, md5: 'a'.repeat(32), sha256: 'b'.repeat(64), pdq: 'c'.repeat(64) };

const match = (over: Partial<HashMatchRecord> = {}): HashMatchRecord => ({
  position: 1,
  bankId: 'bnk_1',
  bankName: 'NCII',
  kind: 'pdq',
  distance: 4,
  hashId: 'hsh_new',
  metadata: { source: 'stopncii' },
  action: 'flag',
  ...over,
});

/** A record stream as moderation leaves it: upserted with a user, then moderated (by automation or a person). */
function recordWith(
  moderation: { status: 'Compliant' | 'Flagged'; reasons?: string[]; rules?: string[]; manual?: boolean },
  options: { passthrough?: boolean; hashes?: boolean } = {},
): RecordState {
  const context = { tenantId: TENANT, correlationId: 'c' };
  const empty: Loaded<RecordState> = {
    kind: 'record',
    stream: `record:${RECORD}`,
    state: null,
    tail: [],
    events: [],
    created: true,
  };
  let staged = stageRecord(
    empty,
    {
      type: 'UpsertRecord',
      recordId: RECORD,
      input: {
        clientId: 'post-1',
        name: 'Post',
        entity: 'post',
        content: { text: 'hello', imageUrls: [], externalUrls: [] },
        userId: 'usr_1',
      },
      passthrough: options.passthrough ?? false,
    },
    context,
  );
  staged = stageRecord(
    staged,
    {
      type: 'ModerateRecord',
      moderationId: 'mod_0',
      outcome: {
        status: moderation.manual ? 'Compliant' : moderation.status,
        reasons: moderation.reasons ?? [],
        rules: moderation.rules ?? [],
        ...(options.hashes === false || options.passthrough ? {} : { imageHashes: [IMAGE] }),
      },
      testMode: false,
      ruleSetVersion: 3,
    },
    context,
  );
  if (moderation.manual) {
    staged = stageRecord(
      staged,
      { type: 'ModerateRecordManually', moderationId: 'mod_m', status: moderation.status, reason: 'ok', actor: 'a' },
      context,
    );
  }
  return staged.state!;
}

function harness(state: RecordState, matches: HashMatchRecord[]) {
  const committed: DomainEvent[] = [];
  const afterChanges: RecordState[] = [];
  /** Streams projected without events of their own: a command found applied finishing what a failure left. */
  const projected: string[] = [];
  const loaded = (id: string): Loaded<RecordState> => ({
    kind: 'record',
    stream: `record:${id}`,
    state,
    tail: [],
    events: [],
    created: false,
  });
  const deps = {
    store: {
      streams: { loadRecord: (id: string) => Promise.resolve(loaded(id)) },
      loadRecordAndUser: (id: string) => Promise.resolve({ record: loaded(id) }),
      commit: (...streams: Loaded<RecordState>[]) => {
        projected.push(...streams.map((stream) => stream.stream));
        return Promise.resolve([]);
      },
    },
    tenants: {
      get: () => Promise.resolve({ settings: DEFAULT_SETTINGS, rules: DEFAULT_RULES, rulesVersion: 7 }),
    },
    writer: {
      retrying: <T>(attempt: (fresh: boolean) => Promise<T>) => attempt(false),
      commit: (...streams: Loaded<RecordState>[]) => {
        committed.push(...streams.flatMap((stream) => stream.events));
        return Promise.resolve();
      },
    },
    users: {
      afterRecordChange: (_c: unknown, _before: unknown, after: RecordState) => {
        afterChanges.push(after);
        return Promise.resolve();
      },
      recount: () => Promise.resolve(),
    },
  } as unknown as Parameters<typeof retroMatch>[0];
  const matcher = { match: () => Promise.resolve(matches) };
  const input: RetroMatchInput = {
    tenantId: TENANT,
    recordId: RECORD,
    passId: 'hrp_1',
    hashIds: new Set(['hsh_new']),
    moderationId: 'mod_retro',
  };
  return { run: () => retroMatch(deps, matcher, input), committed, afterChanges, projected };
}

function moderated(events: DomainEvent[]) {
  expect(events).toHaveLength(1);
  const [event] = events;
  if (event?.type !== 'RecordModerated') throw new Error('expected RecordModerated');
  return event;
}

describe('retroMatch', () => {
  it('flags a compliant record whose stored image matches a new hash, with a reason naming the bank', async () => {
    const h = harness(recordWith({ status: 'Compliant' }), [match()]);
    expect(await h.run()).toBe('flagged');
    const event = moderated(h.committed);
    expect(event.correlationId).toBe('hrp_1');
    expect(event.data).toMatchObject({
      status: 'Flagged',
      previousStatus: 'Compliant',
      via: 'AI',
      reasons: [hashReason(match())],
      rules: [],
      hashMatches: [match()],
      commandId: `hrp_1:${RECORD}`,
      ruleSetVersion: 7,
    });
    expect(event.data.suspendsUser).toBeUndefined();
    expect(h.afterChanges[0]?.status).toBe('Flagged');
  });

  it('stages the user’s suspension when the bank is flag_and_suspend', async () => {
    const h = harness(recordWith({ status: 'Compliant' }), [match({ action: 'flag_and_suspend' })]);
    expect(await h.run()).toBe('flagged');
    const event = moderated(h.committed);
    expect(event.data.suspendsUser).toMatchObject({ bankId: 'bnk_1', bankName: 'NCII', hashId: 'hsh_new' });
    expect(h.afterChanges[0]?.suspendsUser?.bankId).toBe('bnk_1');
  });

  it('keeps the standing flag’s reasons and rules, adding the bank’s reason', async () => {
    const reasons = ['Content contains blocked word: spam'];
    const h = harness(recordWith({ status: 'Flagged', reasons, rules: ['blocklist'] }), [match()]);
    expect(await h.run()).toBe('flagged');
    const event = moderated(h.committed);
    expect(event.data.reasons).toEqual([...reasons, hashReason(match())]);
    expect(event.data.rules).toEqual(['blocklist']);
    expect(event.data.ruleSetVersion).toBe(3);
  });

  it.each([
    ['a person decided it Compliant', { status: 'Compliant' as const, manual: true }],
    ['a person decided it Flagged', { status: 'Flagged' as const, manual: true }],
  ])('leaves a record alone when %s', async (_name, moderation) => {
    const h = harness(recordWith(moderation), [match()]);
    expect(await h.run()).toBe('heldByHumans');
    expect(h.committed).toEqual([]);
    expect(h.afterChanges).toEqual([]);
  });

  it.each([
    ['a negative bank cancelled the match', [match({ cancelledBy: 'hsh_neg' })]],
    ['only another hash matches (acted on when the record was moderated)', [match({ hashId: 'hsh_old' })]],
    ['nothing matches any more (withdrawn, disabled)', []],
  ])('writes nothing when %s', async (_name, matches) => {
    const h = harness(recordWith({ status: 'Compliant' }), matches);
    expect(await h.run()).toBe('unchanged');
    expect(h.committed).toEqual([]);
  });

  it('writes nothing when the record already carries the bank’s reason', async () => {
    const h = harness(recordWith({ status: 'Flagged', reasons: [hashReason(match())] }), [match()]);
    expect(await h.run()).toBe('unchanged');
    expect(h.committed).toEqual([]);
  });

  it('answers flagged without writing again for a record the pass already flagged (a resumed attempt)', async () => {
    const first = harness(recordWith({ status: 'Compliant' }), [match()]);
    await first.run();
    const again = harness(first.afterChanges[0]!, [match()]);
    expect(await again.run()).toBe('flagged');
    expect(again.committed).toEqual([]);
    // What a failure after the first attempt's append may have left unprojected is projected.
    expect(again.projected).toEqual([`record:${RECORD}`]);
  });

  it.each([
    ['a passthrough record', { passthrough: true }],
    ['a record without image hashes', { hashes: false }],
  ])('skips %s', async (_name, options) => {
    const h = harness(recordWith({ status: 'Compliant' }, options), [match()]);
    expect(await h.run()).toBe('gone');
    expect(h.committed).toEqual([]);
  });
});
