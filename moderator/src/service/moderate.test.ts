import { DEFAULT_SETTINGS, recordIdFor, userIdFor, type DomainEvent, type TenantSettings } from '@vigil/proto';
import { DEFAULT_RULES } from '@vigil/proto/rules';
import { ProviderError, type EngineInput, type EngineResult, type ModerationEngine } from '../engine';
import { UnavailableError } from '../domain/errors';
import type { RecordState } from '../domain/record';
import type { Loaded } from '../domain/stream';
import type { UserState } from '../domain/user';
import { StreamConflict, type EventStore } from '../store/event-store';
import type { TenantConfigCache } from '../store/tenant-config';
import { JudgementCarry } from './judgement-carry';
import { moderate, type ModerateInput, type ModerationDeps } from './moderate';
import { NewRecordGuess } from './new-record-guess';
import { StreamWriter } from './stream-writer';
import { UserReconciliation } from './user-reconciliation';

type State = RecordState | UserState;

/**
 * The event store in memory: each stream's state after its last commit and every event appended. A commit whose first
 * event does not follow the stored version loses with StreamConflict, as the unique `{stream, version}` index decides.
 */
class MemoryEventStore {
  readonly states = new Map<string, State>();
  readonly events: DomainEvent[] = [];
  readonly flaggedCounts = new Map<string, number>();
  /** Failures the next commits throw, in turn (a store outage). */
  readonly failures: Error[] = [];
  /** Each call into the store, by method name, in order. */
  readonly calls: string[] = [];
  /** The flagged counts as each commit left them, in order. */
  readonly countsAtCommit: Map<string, number>[] = [];

  /** The pieces EventStore exposes, as the use cases reach them. */
  readonly streams = {
    loadRecord: (recordId: string) => this.loadRecord(recordId),
    loadUser: (userId: string) => this.loadUser(userId),
  };
  readonly flagged = {
    countFlagged: (tenantId: string, userId: string) => this.countFlagged(tenantId, userId),
    refreshFlaggedCount: (tenantId: string, userId: string) => this.refreshFlaggedCount(tenantId, userId),
    findBankSuspension: (tenantId: string, userId: string, exceptRecordId?: string) =>
      this.findBankSuspension(tenantId, userId, exceptRecordId),
  };

  /** Records read, by id (a guess that the record is new reads none). */
  readonly recordReads: string[] = [];

  loadRecordAndUser(
    recordId: string,
    userId: string | undefined,
    _fresh?: boolean,
    { assumeNew = false }: { assumeNew?: boolean } = {},
  ): Promise<{ record: Loaded<RecordState>; user?: Loaded<UserState> }> {
    this.calls.push('loadRecordAndUser');
    const record = assumeNew
      ? Promise.resolve<Loaded<RecordState>>({
          kind: 'record',
          stream: `record:${recordId}`,
          state: null,
          tail: [],
          events: [],
          created: true,
        })
      : this.readRecord(recordId);
    return Promise.all([record, userId ? this.loadUser(userId) : undefined]).then(([record, user]) =>
      user ? { record, user } : { record },
    );
  }

  private readRecord(recordId: string): Promise<Loaded<RecordState>> {
    this.recordReads.push(recordId);
    return this.loadRecord(recordId);
  }

  loadRecord(recordId: string): Promise<Loaded<RecordState>> {
    return Promise.resolve(this.load('record', recordId) as Loaded<RecordState>);
  }

  loadUser(userId: string): Promise<Loaded<UserState>> {
    return Promise.resolve(this.load('user', userId) as Loaded<UserState>);
  }

  commit(...streams: Loaded<State>[]): Promise<DomainEvent[]> {
    return this.commitTelling(() => undefined, ...streams);
  }

  commitTelling(stored: (events: DomainEvent[]) => void, ...streams: Loaded<State>[]): Promise<DomainEvent[]> {
    this.calls.push('commit');
    const failure = this.failures.shift();
    if (failure) return Promise.reject(failure);
    // The flagged counts staged on user streams go in before the events, as EventStore writes them: a commit that
    // then conflicts has written them already.
    for (const stream of streams) {
      if (stream.flaggedCount !== undefined) this.flaggedCounts.set(stream.state!._id, stream.flaggedCount);
    }
    this.countsAtCommit.push(new Map(this.flaggedCounts));
    // One ordered insert, as EventStore's: the streams before the first taken version go in, the rest do not.
    const appended: DomainEvent[] = [];
    for (const stream of streams) {
      const first = stream.events[0];
      if (first && first.version !== (this.states.get(stream.stream)?.version ?? 0) + 1) {
        if (appended.length > 0) stored(appended);
        return Promise.reject(new StreamConflict(appended));
      }
      if (stream.state && stream.events.length) this.states.set(stream.stream, stream.state);
      this.events.push(...stream.events);
      appended.push(...stream.events);
    }
    if (appended.length > 0) stored(appended);
    return Promise.resolve(appended);
  }

  countFlagged(tenantId: string, userId: string): Promise<number> {
    this.calls.push('countFlagged');
    const flagged = [...this.states.values()].filter(
      (s) => 'entity' in s && s.tenantId === tenantId && s.userId === userId && s.status === 'Flagged' && !s.deleted,
    );
    return Promise.resolve(flagged.length);
  }

  findBankSuspension(tenantId: string, userId: string, exceptRecordId?: string) {
    this.calls.push('findBankSuspension');
    const found = [...this.states.values()].find(
      (s): s is RecordState =>
        'entity' in s &&
        s.tenantId === tenantId &&
        s.userId === userId &&
        s.status === 'Flagged' &&
        !s.deleted &&
        s.suspendsUser !== undefined &&
        s._id !== exceptRecordId,
    );
    return Promise.resolve(found?.suspendsUser ? { ...found.suspendsUser, recordId: found._id } : undefined);
  }

  setFlaggedCount(userId: string, count: number): Promise<void> {
    this.calls.push('setFlaggedCount');
    this.flaggedCounts.set(userId, count);
    return Promise.resolve();
  }

  async refreshFlaggedCount(tenantId: string, userId: string): Promise<number> {
    this.calls.push('refreshFlaggedCount');
    const count = await this.countFlagged(tenantId, userId);
    await this.setFlaggedCount(userId, count);
    return count;
  }

  user(userId: string): UserState | undefined {
    return this.states.get(`user:${userId}`) as UserState | undefined;
  }

  record(recordId: string): RecordState | undefined {
    return this.states.get(`record:${recordId}`) as RecordState | undefined;
  }

  private load(kind: 'record' | 'user', id: string): Loaded<State> {
    const stream = `${kind}:${id}`;
    const state = this.states.get(stream) ?? null;
    return { kind, stream, state, tail: [], events: [], created: state === null };
  }
}

const FLAGGED: EngineResult = {
  status: 'Flagged',
  reasons: ['Content contains blocked word: spam'],
  rules: ['blocklist'],
};
const COMPLIANT: EngineResult = { status: 'Compliant', reasons: [], rules: [] };

/** Flags any text with "spam" in it. */
function engineFlaggingSpam(): ModerationEngine & { calls: EngineInput[] } {
  const calls: EngineInput[] = [];
  return {
    calls,
    moderate: (input: EngineInput) => {
      calls.push(input);
      return Promise.resolve(input.text?.includes('spam') ? FLAGGED : COMPLIANT);
    },
  };
}

function setup(settings: Partial<TenantSettings> = {}, engine: ModerationEngine = engineFlaggingSpam()) {
  const store = new MemoryEventStore();
  const eventStore = store as unknown as EventStore;
  const appended: DomainEvent[][] = [];
  const writer = new StreamWriter(eventStore, { appended: (events) => appended.push([...events]) }, 8);
  const tenants = {
    get: () =>
      Promise.resolve({ settings: { ...DEFAULT_SETTINGS, ...settings }, rules: DEFAULT_RULES, rulesVersion: 3 }),
  } as unknown as TenantConfigCache;
  const deps: ModerationDeps = {
    store: eventStore,
    engine,
    tenants,
    writer,
    users: new UserReconciliation(eventStore, writer),
    carry: new JudgementCarry({ max: 10, ttlMs: 60_000 }),
  };
  return { store, deps, appended };
}

const input = (overrides: Partial<ModerateInput> = {}): ModerateInput => ({
  tenantId: 'ten_1',
  correlationId: 'corr_1',
  clientId: 'post-1',
  name: 'Hello',
  entity: 'post',
  content: { text: 'buy spam now', imageUrls: [], externalUrls: [] },
  user: { clientId: 'user-1' },
  passthrough: false,
  ...overrides,
});

const types = (events: DomainEvent[]) => events.map((event) => event.type);

describe('moderate', () => {
  it('stores the record with its moderation and answers the verdict, its reasons and the rule set version', async () => {
    const { store, deps, appended } = setup({ suspensionThreshold: 5 });
    const result = await moderate(deps, input());
    expect(result).toMatchObject({
      status: 'Flagged',
      flagged: true,
      reasons: FLAGGED.reasons,
      rules: ['blocklist'],
      ruleSetVersion: 3,
      duplicate: false,
    });
    expect(result.recordId).toMatch(/^rec_/);
    expect(result.moderationId).toMatch(/^mod_/);
    expect(types(store.events)).toEqual(['UserUpserted', 'RecordUpserted', 'RecordModerated']);
    // The outbox relay is woken with what was appended, without reading it back.
    expect(appended.flat()).toEqual(store.events);
  });

  it('suspends the user in the same commit when their flagged records reach the threshold', async () => {
    const { store, deps, appended } = setup({ suspensionThreshold: 1 });
    const result = await moderate(deps, input());
    expect(store.user(result.userId!)?.status).toBe('Suspended');
    const commit = appended.find((events) => types(events).includes('RecordModerated'));
    expect(types(commit ?? [])).toContain('UserStatusChanged');
    // The record's webhook shows the user as the moderation left them.
    const moderated = commit?.find((event) => event.type === 'RecordModerated');
    expect(moderated?.data).toMatchObject({ view: { user: { status: 'Suspended' } } });
  });

  it("suspends the user under the threshold in the same commit when a flag_and_suspend bank's match flags the record", async () => {
    const match = {
      position: 1,
      bankId: 'bnk_1',
      bankName: 'Exchange',
      kind: 'md5' as const,
      distance: 0,
      hashId: 'hsh_1',
      metadata: {},
      action: 'flag_and_suspend' as const,
    };
    const matched: EngineResult = { status: 'Flagged', reasons: ['Image 1 matched'], rules: [], hashMatches: [match] };
    const { store, deps, appended } = setup({ suspensionThreshold: 5 }, { moderate: () => Promise.resolve(matched) });
    const result = await moderate(deps, input());
    expect(store.user(result.userId!)?.status).toBe('Suspended');
    const commit = appended.find((events) => types(events).includes('RecordModerated'))!;
    const changed = commit.find((event) => event.type === 'UserStatusChanged');
    expect(changed?.data).toMatchObject({
      reason: expect.stringContaining('"Exchange" (bnk_1)'),
      viaRecordId: result.recordId,
    });
    // The record carried the bank's flag: the user's records were not read for another one.
    expect(store.calls).not.toContain('findBankSuspension');

    // A later record under the threshold, flagged and cleared, does not reinstate them while the bank's flag stands.
    deps.engine = engineFlaggingSpam();
    await moderate(deps, input({ clientId: 'post-2' }));
    await moderate(deps, input({ clientId: 'post-2', content: { text: 'fixed', imageUrls: [], externalUrls: [] } }));
    expect(store.user(result.userId!)?.status).toBe('Suspended');
    expect(store.calls).toContain('findBankSuspension');
  });

  it('enters the store twice when the moderation moves no flagged count: one load, one commit', async () => {
    const { store, deps } = setup({ suspensionThreshold: 5 });
    await moderate(deps, input({ content: { text: 'hello', imageUrls: [], externalUrls: [] } }));
    expect(store.calls).toEqual(['loadRecordAndUser', 'commit']);
  });

  it('counts the user’s flagged records before the commit and stores the count with it, then reconciles', async () => {
    const { store, deps } = setup({ suspensionThreshold: 1 });
    const result = await moderate(deps, input());
    expect(store.countsAtCommit[0]?.get(result.userId!)).toBe(1);
    // No separate write of the count before the commit: it goes in with it.
    expect(store.calls.slice(0, 3)).toEqual(['loadRecordAndUser', 'countFlagged', 'commit']);
  });

  it('suspends no one in test mode, and says so in the answer', async () => {
    const { store, deps } = setup({ suspensionThreshold: 1, testMode: true });
    const result = await moderate(deps, input());
    expect(result).toMatchObject({ status: 'Flagged', testMode: true });
    expect(store.user(result.userId!)?.status).not.toBe('Suspended');
    expect(types(store.events)).not.toContain('UserStatusChanged');
  });

  it('applies an ingest command once: its re-delivery is a duplicate that appends nothing and judges nothing', async () => {
    const engine = engineFlaggingSpam();
    const { store, deps } = setup({ suspensionThreshold: 5 }, engine);
    await moderate(deps, input({ commandId: 'cmd_1' }));
    const stored = store.events.length;
    const again = await moderate(deps, input({ commandId: 'cmd_1' }));
    expect(again).toMatchObject({ duplicate: true, status: 'Flagged' });
    expect(store.events).toHaveLength(stored);
    expect(engine.calls).toHaveLength(1);
  });

  it('stores a passthrough record without its name, content or matched text', async () => {
    const { store, deps } = setup({ suspensionThreshold: 5 });
    const result = await moderate(deps, input({ passthrough: true, user: undefined }));
    // The caller still hears what matched.
    expect(result.reasons).toEqual(FLAGGED.reasons);
    const stored = JSON.stringify(store.events);
    expect(stored).not.toContain('buy spam now');
    expect(stored).not.toContain('Hello');
    expect(stored).not.toContain('blocked word: spam');
    expect(stored).toContain('Content contains blocked word');
  });

  it.each([true, false])(
    'answers the masked content, on the webhook view of a kept record only (passthrough: %s)',
    async (passthrough) => {
      const masked: EngineResult = {
        status: 'Flagged',
        reasons: ['Content contains contact details (phone): 5-17'],
        rules: ['contact'],
        maskedText: 'call [contact removed] now',
      };
      const engine = { moderate: () => Promise.resolve(masked) };
      const { store, deps } = setup({ suspensionThreshold: 5 }, engine);
      const text = 'call 212-555-0199 now';
      const result = await moderate(
        deps,
        input({ passthrough, user: undefined, content: { text, imageUrls: [], externalUrls: [] } }),
      );
      expect(result.maskedContent).toBe('call [contact removed] now');
      expect(result.reasons).toEqual(masked.reasons);
      const moderated = store.events.find((event) => event.type === 'RecordModerated');
      if (moderated?.type !== 'RecordModerated') throw new Error('no moderation stored');
      // The webhook shows what the answer shows, for a record whose text is kept anyway; a passthrough record's events
      // hold no content, masked or not.
      expect(moderated.data.view?.maskedContent).toBe(passthrough ? undefined : 'call [contact removed] now');
      const stored = JSON.stringify(store.events);
      expect(stored).not.toContain('maskedText');
      expect(stored).toContain(passthrough ? '"Content contains contact details (phone)"' : '(phone): 5-17');
      if (passthrough) {
        expect(stored).not.toContain('[contact removed]');
        expect(stored).not.toContain(text);
      } else {
        // The masked copy is on the webhook view alone, not in the stored outcome.
        expect(stored.split('[contact removed]')).toHaveLength(2);
      }
    },
  );

  it('stores a record the roll-out left out without a moderation and without judging it', async () => {
    const engine = engineFlaggingSpam();
    const { store, deps } = setup({}, engine);
    const result = await moderate(deps, input({ sampled: false, commandId: 'cmd_2' }));
    expect(result).toMatchObject({ skipped: true, moderationId: '' });
    expect(engine.calls).toHaveLength(0);
    expect(types(store.events)).not.toContain('RecordModerated');
  });

  it('applies a command the roll-out left out once: re-delivered after later changes, it undoes none of them', async () => {
    const { store, deps } = setup();
    const text = (value: string) => ({ content: { text: value, imageUrls: [], externalUrls: [] } });
    await moderate(deps, input({ ...text('first words'), sampled: false, commandId: 'cmd_left_out' }));
    await moderate(deps, input({ ...text('second words'), sampled: false, commandId: 'cmd_next' }));
    const stored = store.events.length;
    // Kafka delivers both again (their offsets were not committed): neither is applied a second time.
    const again = await moderate(deps, input({ ...text('first words'), sampled: false, commandId: 'cmd_left_out' }));
    await moderate(deps, input({ ...text('second words'), sampled: false, commandId: 'cmd_next' }));
    expect(again).toMatchObject({ duplicate: true });
    expect(store.events).toHaveLength(stored);
    expect(store.record(recordIdFor('ten_1', 'post-1'))?.content?.text).toBe('second words');
  });

  it('answers a failing moderation provider with a retriable UnavailableError', async () => {
    const failing: ModerationEngine = { moderate: () => Promise.reject(new ProviderError('provider 503', true)) };
    const { store, deps } = setup({}, failing);
    const run = moderate(deps, input());
    await expect(run).rejects.toBeInstanceOf(UnavailableError);
    await expect(run).rejects.toMatchObject({ retriable: true });
    expect(store.events).toHaveLength(0);
  });

  it('retries a command whose commit failed from the judgement already made, without judging again', async () => {
    const engine = engineFlaggingSpam();
    const { store, deps } = setup({ suspensionThreshold: 5 }, engine);
    store.failures.push(new Error('store unreachable'));
    await expect(moderate(deps, input({ commandId: 'cmd_3' }))).rejects.toThrow('store unreachable');
    const result = await moderate(deps, input({ commandId: 'cmd_3' }));
    expect(result.status).toBe('Flagged');
    expect(engine.calls).toHaveLength(1);
  });

  it('guesses a new record without reading it, reads it to update it, and reads another writer’s record after one wrong guess', async () => {
    const { store, deps } = setup();
    const guessing: ModerationDeps = { ...deps, newRecords: new NewRecordGuess() };
    const post = (clientId: string, text: string) =>
      input({ clientId, user: undefined, content: { text, imageUrls: [], externalUrls: [] } });
    // Each moderation commits once, and once more after a wrong guess.
    let moderations = 0;
    const run = async (on: ModerationDeps, request: ModerateInput) => {
      moderations += 1;
      return moderate(on, request);
    };
    const conflicts = () => store.calls.filter((call) => call === 'commit').length - moderations;

    expect((await run(guessing, post('new', 'buy spam now'))).status).toBe('Flagged');
    expect(store.recordReads).toEqual([]);
    expect((await run(guessing, post('new', 'hello'))).status).toBe('Compliant');
    expect(store.recordReads).toHaveLength(1);
    expect(conflicts()).toBe(0);

    // Another process (its own guess) moderated this record: this one's first guess is wrong, its next are not made.
    await run({ ...deps, newRecords: new NewRecordGuess() }, post('elsewhere', 'hello'));
    for (const text of ['buy spam now', 'hello', 'spam again']) await run(guessing, post('elsewhere', text));
    expect(conflicts()).toBe(1);
    expect(store.recordReads).toHaveLength(4);
    const versions = store.events.filter((event) => event.stream.endsWith(recordIdFor('ten_1', 'elsewhere')));
    expect(versions.map((event) => event.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('guesses with a user too, and reads the record first when the decision would move the user’s flagged count', async () => {
    const { store, deps } = setup({ suspensionThreshold: 5 });
    const guessing: ModerationDeps = { ...deps, newRecords: new NewRecordGuess() };
    const post = (clientId: string, text: string) =>
      input({ clientId, content: { text, imageUrls: [], externalUrls: [] } });
    const commits = () => store.calls.filter((call) => call === 'commit').length;

    // A new compliant record of the user: no read, one commit, no count.
    expect((await moderate(guessing, post('fresh', 'hello'))).status).toBe('Compliant');
    expect(store.recordReads).toEqual([]);
    expect(commits()).toBe(1);

    // Another process flagged this record: the user's count is 1.
    await moderate({ ...deps, newRecords: new NewRecordGuess() }, post('flagged', 'buy spam now'));
    const user = [...store.flaggedCounts.keys()][0]!;
    expect(store.flaggedCounts.get(user)).toBe(1);
    const before = commits();
    // This process has not seen it: it guesses, but a flag would move the count, so it reads the record first and
    // commits once, and the count is never written as if the record were new (2).
    expect((await moderate(guessing, post('flagged', 'spam again'))).status).toBe('Flagged');
    expect(store.recordReads.at(-1)).toBe(recordIdFor('ten_1', 'flagged'));
    expect(commits() - before).toBe(1);
    expect(store.countsAtCommit.map((counts) => counts.get(user))).not.toContain(2);
    expect(store.flaggedCounts.get(user)).toBe(1);
  });

  it("guesses with a user, but reads the record first when the command would change the user's data", async () => {
    const { store, deps } = setup();
    const post = (commandId: string, email: string) =>
      input({
        commandId,
        user: { clientId: 'user-1', email },
        content: { text: 'hello', imageUrls: [], externalUrls: [] },
      });
    await moderate(deps, post('cmd_x', 'old@example.com'));
    await moderate(deps, post('cmd_y', 'new@example.com'));
    const stored = store.events.length;
    // A process that has not seen the record gets the first command again (its offset was not committed): a guess
    // would append the user's old address before the record's first version conflicted.
    const guessing: ModerationDeps = { ...deps, newRecords: new NewRecordGuess() };
    expect(await moderate(guessing, post('cmd_x', 'old@example.com'))).toMatchObject({ duplicate: true });
    expect(store.events).toHaveLength(stored);
    expect(store.user(userIdFor('ten_1', 'user-1'))?.email).toBe('new@example.com');
  });

  it('stops guessing while most guesses are wrong, and guesses again once most records read are new', async () => {
    const { store, deps } = setup();
    const guessing: ModerationDeps = { ...deps, newRecords: new NewRecordGuess() };
    const other: ModerationDeps = { ...deps, newRecords: new NewRecordGuess() };
    const post = (clientId: string) =>
      input({ clientId, user: undefined, content: { text: 'hello', imageUrls: [], externalUrls: [] } });
    const commits = () => store.calls.filter((call) => call === 'commit').length;

    // Another process made 40 records; this one updates them: its guesses are wrong until the valve closes.
    for (let index = 0; index < 40; index += 1) await moderate(other, post(`old-${index}`));
    const before = commits();
    for (let index = 0; index < 40; index += 1) await moderate(guessing, post(`old-${index}`));
    // 40 commits and one wrong guess each for the first 20 (the valve weighs none fewer), then none.
    expect(commits() - before).toBe(60);

    // New records: read while the valve is closed, each read tells it so, and it opens again.
    const reads = store.recordReads.length;
    for (let index = 0; index < 100; index += 1) await moderate(guessing, post(`new-${index}`));
    // The window of 100 held the 40 wrong ones: 60 reads fill it, 20 more push out half of them (20 %, open again).
    expect(store.recordReads.length - reads).toBe(80);
    expect(store.recordReads.at(-1)).toBe(recordIdFor('ten_1', 'new-79'));
  });

  it('loads again and decides again when another writer took the stream version first', async () => {
    const { store, deps } = setup({ suspensionThreshold: 5 });
    await moderate(deps, input({ content: { text: 'hello', imageUrls: [], externalUrls: [] } }));
    const realLoad = store.loadRecord.bind(store);
    let stale = true;
    // The first load returns the record as it was before a concurrent write of the same version.
    store.loadRecord = async (recordId: string) => {
      const loaded = await realLoad(recordId);
      if (!stale) return loaded;
      stale = false;
      const older = { ...loaded.state!, version: loaded.state!.version - 1 };
      return { ...loaded, state: older };
    };
    const result = await moderate(deps, input());
    expect(result.status).toBe('Flagged');
    const versions = store.events.filter((e) => e.stream.startsWith('record:')).map((e) => e.version);
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
    expect(new Set(versions).size).toBe(versions.length);
  });
});
