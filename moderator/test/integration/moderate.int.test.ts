import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { COLLECTIONS, recordIdFor, userIdFor } from '@vigil/proto';
import { recordStream, userStream } from '../../src/domain/stream-names';
import type { ModerateResponse__Output } from '@vigil/proto/dist/generated/vigil/moderation/v1/ModerateResponse';
import type { Record__Output } from '@vigil/proto/dist/generated/vigil/moderation/v1/Record';
import type { User__Output } from '@vigil/proto/dist/generated/vigil/moderation/v1/User';
import type { ListRecordsResponse__Output } from '@vigil/proto/dist/generated/vigil/moderation/v1/ListRecordsResponse';
import type { GetRecordEventsResponse__Output } from '@vigil/proto/dist/generated/vigil/moderation/v1/GetRecordEventsResponse';
import type { Appeal__Output } from '@vigil/proto/dist/generated/vigil/moderation/v1/Appeal';
import { waitFor } from '../../../deploy/test-support';
import { stageRecord, stageUser } from '../../src/domain/stream';
import { EventStore, StreamConflict } from '../../src/store/event-store';
import { rebuildProjections } from '../../src/store/rebuild-projections';
import { moderate as moderateUseCase, type ModerationDeps } from '../../src/service/moderate';
import { NewRecordGuess } from '../../src/service/new-record-guess';
import { content, startHarness, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  // A record's first moderation reads nothing (see the test of MODERATE_ASSUME_NEW below).
  h = await startHarness({ MODERATE_ASSUME_NEW: true });
});
afterAll(async () => {
  await h.close();
});

const tenant = (on?: Harness) => (on ?? h).newTenant();
const moderate = (request: Record<string, unknown>) =>
  h.call<Record<string, unknown>, ModerateResponse__Output>('Moderate', request);
const PROFANE = 'you are a fucking idiot';

describe('Moderate', () => {
  it('starts its feature modules in order, the gRPC server last, and is ready with them', async () => {
    expect(h.moderator.modules).toEqual([
      'event-store',
      'engine',
      'hash-banks',
      'hash-feeds',
      'outbox-relay',
      'rule-precision',
      'transparency-counts',
      'shadow-rules',
      'contact-erasure',
      'hash-retro',
      'backtests',
      'ingest',
      'grpc-server',
    ]);
    expect(await h.moderator.ready()).toBe(true);
  });

  it('persists the record, its events and the user, and answers with ids and the result', async () => {
    const tenantId = await tenant();
    const res = await moderate({
      tenantId,
      clientId: 'post-1',
      name: 'Title',
      entity: 'post',
      content: content(PROFANE),
      metadataJson: JSON.stringify({ lang: 'en', n: 3 }),
      user: { clientId: 'user-1', username: 'ann' },
      requestId: 'req-1',
    });
    expect(res.recordId).toBe(recordIdFor(tenantId, 'post-1'));
    expect(res.status).toBe('Flagged');
    expect(res.flagged).toBe(true);
    expect(res.rules).toEqual(['profanity']);
    expect(res.moderationId).toMatch(/^mod_/);
    expect(res.userId).toMatch(/^usr_/);

    const record = await h.call<unknown, Record__Output>('GetRecord', { tenantId, recordId: res.recordId });
    expect(record).toMatchObject({
      clientId: 'post-1',
      name: 'Title',
      entity: 'post',
      status: 'Flagged',
      userId: res.userId,
      version: 2,
    });
    expect(JSON.parse(record.metadataJson ?? '')).toEqual({ lang: 'en', n: 3 });

    const history = await h.call<unknown, GetRecordEventsResponse__Output>('GetRecordEvents', {
      tenantId,
      recordId: res.recordId,
    });
    expect(history.events.map((event) => event.type)).toEqual(['RecordUpserted', 'RecordModerated']);

    const user = await h.call<unknown, User__Output>('GetUser', { tenantId, userId: res.userId });
    expect(user).toMatchObject({
      username: 'ann',
      status: 'Suspended',
      statusUpdatedVia: 'Automation Flagged Record',
      flaggedRecordsCount: 1,
    });
  });

  it('stores no name, content, email, name or username in passthrough mode, anywhere, nor logs them', async () => {
    const tenantId = await tenant();
    const marker = (what: string) => `zq${what}${randomBytes(6).toString('hex')}`;
    const markers = {
      name: marker('name'),
      text: marker('text'),
      email: `${marker('mail')}@example.com`,
      userName: marker('uname'),
      username: marker('uuser'),
    };
    const res = await moderate({
      tenantId,
      clientId: 'secret-1',
      name: markers.name,
      entity: 'message',
      content: { text: `${markers.text} ${PROFANE}`, imageUrls: [], externalUrls: [] },
      user: { clientId: 'secret-user', email: markers.email, name: markers.userName, username: markers.username },
      passthrough: true,
    });
    expect(res.status).toBe('Flagged');

    const record = await h.call<unknown, Record__Output>('GetRecord', { tenantId, recordId: res.recordId });
    expect(record.passthrough).toBe(true);
    expect(record.name).toBeUndefined();
    expect(record.status).toBe('Flagged');
    for (const reason of record.reasons) expect(reason).not.toMatch(/fuck|idiot/i);

    const dump: string[] = [];
    for (const { name } of await h.db.listCollections({}, { nameOnly: true }).toArray()) {
      for (const doc of await h.db.collection(name).find({}).toArray()) dump.push(JSON.stringify(doc));
    }
    expect(dump.join('\n')).toContain(res.recordId);
    const stored = dump.join('\n') + h.logText();
    for (const value of Object.values(markers)) expect(stored).not.toContain(value);
  });

  it('applies a Moderate sent again with the same moderation id once, answering the stored result', async () => {
    const tenantId = await tenant();
    const moderationId = 'mod_01JC0000000000000000000001';
    const request = { tenantId, clientId: 'again', name: 'n', entity: 'post', content: content(PROFANE), moderationId };
    const first = await moderate(request);
    const second = await moderate(request);
    expect(first).toMatchObject({ status: 'Flagged', moderationId });
    expect(second).toEqual(first);
    const moderations = await h.db
      .collection(COLLECTIONS.events)
      .countDocuments({ stream: recordStream(first.recordId), type: 'RecordModerated' });
    expect(moderations).toBe(1);
    await expect(moderate({ ...request, moderationId: 'mod_x' })).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
    });
  });

  it('keeps the same clientId of two tenants apart', async () => {
    const [a, b] = [await tenant(), await tenant()];
    const first = await moderate({
      tenantId: a,
      clientId: 'shared',
      name: 'A',
      entity: 'post',
      content: content('hello'),
    });
    const second = await moderate({
      tenantId: b,
      clientId: 'shared',
      name: 'B',
      entity: 'post',
      content: content(PROFANE),
    });
    expect(first.recordId).not.toBe(second.recordId);
    expect((await h.call<unknown, Record__Output>('GetRecord', { tenantId: a, recordId: first.recordId })).status).toBe(
      'Compliant',
    );
    await expect(h.call('GetRecord', { tenantId: a, recordId: second.recordId })).rejects.toMatchObject({
      code: grpc.status.NOT_FOUND,
    });
    const list = await h.call<unknown, ListRecordsResponse__Output>('ListRecords', { tenantId: b });
    expect(list.records.map((record) => record.name)).toEqual(['B']);
  });

  it('serialises concurrent writers of one record: every moderation stored, versions contiguous', async () => {
    const tenantId = await tenant();
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, index) =>
        moderate({ tenantId, clientId: 'hot', name: `n${index}`, entity: 'post', content: content('fine') }),
      ),
    );
    const recordId = results[0]?.recordId ?? '';
    const events = await h.db
      .collection(COLLECTIONS.events)
      .find({ stream: recordStream(recordId) })
      .sort({ version: 1 })
      .toArray();
    expect(events.map((event) => event.version)).toEqual(Array.from({ length: 10 }, (_, index) => index + 1));
    const record = await h.call<unknown, Record__Output>('GetRecord', { tenantId, recordId });
    expect(record.version).toBe(10);
  });

  it('leaves the record and user projections at their streams’ newest versions after racing writers', async () => {
    const tenantId = await tenant();
    for (let round = 0; round < 4; round += 1) {
      // Some writers may give up on conflicts (ABORTED); every stored event must still be projected.
      await Promise.allSettled(
        Array.from({ length: 8 }, (_, index) =>
          moderate({
            tenantId,
            clientId: 'contended',
            name: `r${round}w${index}`,
            entity: 'post',
            content: content(index % 2 === 0 ? 'fine' : PROFANE),
            user: { clientId: 'contended-user', username: `u${round}${index}` },
          }),
        ),
      );
      const recordId = recordIdFor(tenantId, 'contended');
      const userId = userIdFor(tenantId, 'contended-user');
      const newest = async (stream: string) =>
        (await h.db.collection(COLLECTIONS.events).find({ stream }).sort({ version: -1 }).limit(1).toArray())[0]
          ?.version;
      const record = await h.db.collection(COLLECTIONS.records).findOne({ _id: recordId } as never);
      const user = await h.db.collection(COLLECTIONS.users).findOne({ _id: userId } as never);
      expect(record?.version).toBe(await newest(recordStream(recordId)));
      expect(user?.version).toBe(await newest(userStream(userId)));
    }
  });

  it('rejects an append at a version another writer took', async () => {
    const tenantId = await tenant();
    const res = await moderate({ tenantId, clientId: 'c', name: 'n', entity: 'post', content: content('fine') });
    const { store } = h.moderator;
    const loaded = await store.streams.loadRecord(res.recordId, false);
    const command = { type: 'DeleteRecord' as const };
    expect(await store.commit(stageRecord(loaded, command, { tenantId, correlationId: 'x' }))).toHaveLength(1);
    await expect(store.commit(stageRecord(loaded, command, { tenantId, correlationId: 'y' }))).rejects.toBeInstanceOf(
      StreamConflict,
    );
    expect((await store.streams.loadRecord(res.recordId, true)).state?.deleted).toBe(true);
  });

  it("projects the streams an append stored before another stream's conflict", async () => {
    const tenantId = await tenant();
    const user = { clientId: 'partial-user' };
    const res = await moderate({ tenantId, clientId: 'p', name: 'n', entity: 'post', content: content('fine'), user });
    const { store } = h.moderator;
    const userId = userIdFor(tenantId, 'partial-user');
    const [record, loadedUser] = await Promise.all([
      store.streams.loadRecord(res.recordId, false),
      store.streams.loadUser(userId, false),
    ]);
    const context = { tenantId, correlationId: 'x' };
    await store.commit(stageRecord(record, { type: 'DeleteRecord' }, context));
    const renamed = stageUser(
      loadedUser,
      { type: 'UpsertUser', userId, input: { ...user, username: 'renamed' }, passthrough: false },
      context,
    );
    // The user's event goes in first, then the record's collides with the delete above.
    const conflict = await store
      .commit(renamed, stageRecord(record, { type: 'DeleteRecord' }, context))
      .catch((err: unknown) => err);
    expect(conflict).toBeInstanceOf(StreamConflict);
    expect((conflict as StreamConflict).appended.map((event) => event.id)).toEqual(renamed.events.map((e) => e.id));
    const projected = await h.db.collection(COLLECTIONS.users).findOne({ _id: userId } as never);
    expect(projected?.username).toBe('renamed');
    expect(projected?.version).toBe(renamed.state?.version);
  });

  /** Store commands of one name the moderator has sent so far, to any collection. */
  const commandsSent = async (command: string) => {
    const metric = await h.registry.getSingleMetric('moderator_store_commands_total')?.get();
    return (metric?.values ?? [])
      .filter((value) => value.labels.command === command)
      .reduce((sum, value) => sum + value.value, 0);
  };

  it('sends the events and new records of concurrent commits to the store together', async () => {
    const tenantId = await tenant();
    const { store } = h.moderator;
    const context = { tenantId, correlationId: 'group' };
    const ids = Array.from({ length: 10 }, (_, index) => recordIdFor(tenantId, `group-${index}`));
    const staged = await Promise.all(
      ids.map(async (recordId, index) =>
        stageRecord(
          await store.streams.loadRecord(recordId, false),
          {
            type: 'UpsertRecord',
            recordId,
            input: { clientId: `group-${index}`, name: 'n', entity: 'post', content: content('fine') },
            passthrough: false,
          },
          context,
        ),
      ),
    );
    const before = await commandsSent('insert');
    await Promise.all(staged.map((loaded) => store.commit(loaded)));
    // One commit alone inserts two or three times (its outbox slot's marker, once a second; the events; the new
    // record); ten together about as often.
    const inserts = (await commandsSent('insert')) - before;
    expect(inserts).toBeGreaterThanOrEqual(2);
    expect(inserts).toBeLessThanOrEqual(6);
    const records = await h.db
      .collection(COLLECTIONS.records)
      .find({ tenantId } as never)
      .toArray();
    expect(records.map((record) => record._id).sort()).toEqual([...ids].sort());
    for (const recordId of ids) {
      const events = await h.db
        .collection(COLLECTIONS.events)
        .find({ stream: recordStream(recordId) })
        .toArray();
      expect(events.map((event) => event.type)).toEqual(['RecordUpserted']);
    }
  });

  it('fails only the commit whose version was taken when it goes with others, and stores the rest', async () => {
    const tenantId = await tenant();
    const { store } = h.moderator;
    const context = { tenantId, correlationId: 'group-conflict' };
    const made = [];
    for (const clientId of ['before', 'stale', 'after']) {
      made.push(await moderate({ tenantId, clientId, name: 'n', entity: 'post', content: content('fine') }));
    }
    const [before, stale, after] = await Promise.all(made.map((res) => store.streams.loadRecord(res.recordId, false)));
    if (!before || !stale || !after) throw new Error('records not loaded');
    // Another writer takes the stale record's next version first.
    await store.commit(stageRecord(stale, { type: 'DeleteRecord' }, context));
    const outcomes = await Promise.allSettled(
      [before, stale, after].map((loaded) => store.commit(stageRecord(loaded, { type: 'DeleteRecord' }, context))),
    );
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const conflict = (outcomes[1] as PromiseRejectedResult).reason as StreamConflict;
    expect(conflict).toBeInstanceOf(StreamConflict);
    expect(conflict.appended).toEqual([]);
    for (const loaded of [before, stale, after]) {
      const recordId = loaded.state?._id ?? '';
      expect((await store.streams.loadRecord(recordId, true)).state?.deleted).toBe(true);
      const deletes = await h.db
        .collection(COLLECTIONS.events)
        .countDocuments({ stream: recordStream(recordId), type: 'RecordDeleted' });
      expect(deletes).toBe(1);
    }
  });

  /** Store commands of one name to one collection the moderator has sent so far. */
  const commandsTo = async (command: string, collection: string) => {
    const metric = await h.registry.getSingleMetric('moderator_store_commands_total')?.get();
    return (metric?.values ?? [])
      .filter((value) => value.labels.command === command && value.labels.collection === collection)
      .reduce((sum, value) => sum + value.value, 0);
  };
  const recordReads = () => commandsTo('find', COLLECTIONS.records);
  /** Appends of events: one per commit, two when a guess that the record is new conflicted. */
  const eventAppends = () => commandsTo('insert', COLLECTIONS.events);
  /**
   * Another moderator process on the same store: the same use cases, with its own memory of the records it moderated
   * (and of its guesses).
   */
  const otherProcess = () => {
    const deps = { ...h.moderator.useCases, newRecords: new NewRecordGuess() };
    return (tenantId: string, clientId: string, text: string) =>
      moderateUseCase(deps, {
        tenantId,
        correlationId: 'other-process',
        clientId,
        name: 'n',
        entity: 'post',
        content: content(text),
        passthrough: false,
      });
  };

  it('reads nothing to moderate a new record, and moderates an existing one again after its guess conflicts', async () => {
    const tenantId = await tenant();
    const readsBefore = await recordReads();
    // Another process moderates the record first, and guesses it new too.
    const first = await otherProcess()(tenantId, 'guessed', PROFANE);
    expect(first.status).toBe('Flagged');
    expect((await recordReads()) - readsBefore).toBe(0);

    // The record exists, and this process has not seen it: the guess that it is new conflicts, and the moderation
    // reads it and decides again. (Each of these tests moderates as a process of its own, so that what earlier tests
    // taught the service's valve plays no part.)
    const appendsBefore = await eventAppends();
    const second = await otherProcess()(tenantId, 'guessed', 'fine');
    expect((await eventAppends()) - appendsBefore).toBe(2);
    expect(second.recordId).toBe(first.recordId);
    expect(second.status).toBe('Compliant');
    expect((await recordReads()) - readsBefore).toBeGreaterThanOrEqual(1);
    const record = await h.call<unknown, Record__Output>('GetRecord', { tenantId, recordId: first.recordId });
    expect(record).toMatchObject({ status: 'Compliant', version: 4 });
    const events = await h.db
      .collection(COLLECTIONS.events)
      .find({ stream: recordStream(first.recordId) })
      .toArray();
    expect(events.map((event) => event.version as number).sort((a, b) => a - b)).toEqual([1, 2, 3, 4]);
    // No event is copied into the outbox: each stored one carries the slot whose marker stands for it there.
    expect(events.filter((event) => typeof event.slot !== 'string')).toEqual([]);
    const copies = await h.db
      .collection(COLLECTIONS.outbox)
      .find({ stream: recordStream(first.recordId) } as never)
      .toArray();
    expect(copies).toEqual([]);
  });

  it('reads and updates a record it moderated without guessing, and another process’s after one wrong guess', async () => {
    const tenantId = await tenant();
    const mine = otherProcess();
    const post = (clientId: string, text: string) => mine(tenantId, clientId, text);
    /** The event appends and record reads of one moderation. */
    const costOf = async (clientId: string, text: string) => {
      const [appends, reads] = [await eventAppends(), await recordReads()];
      await post(clientId, text);
      return { appends: (await eventAppends()) - appends, reads: (await recordReads()) - reads };
    };

    expect(await costOf('own', PROFANE)).toEqual({ appends: 1, reads: 0 });
    for (const text of ['fine', PROFANE, 'fine']) expect(await costOf('own', text)).toEqual({ appends: 1, reads: 1 });

    await otherProcess()(tenantId, 'theirs', 'fine');
    expect(await costOf('theirs', PROFANE)).toEqual({ appends: 2, reads: 1 });
    for (const text of ['fine', PROFANE, 'fine'])
      expect(await costOf('theirs', text)).toEqual({ appends: 1, reads: 1 });
    const record = await h.call<unknown, Record__Output>('GetRecord', {
      tenantId,
      recordId: recordIdFor(tenantId, 'theirs'),
    });
    expect(record).toMatchObject({ status: 'Compliant', version: 10 });
  });

  it('guesses a new record with a user, and reads the record first when a flag would move the user’s count', async () => {
    const tenantId = await tenant();
    const user = { clientId: 'guessed-user' };
    const as = (process: ModerationDeps) => (clientId: string, text: string) =>
      moderateUseCase(process, {
        tenantId,
        correlationId: 'guess-with-user',
        clientId,
        name: 'n',
        entity: 'post',
        content: content(text),
        user,
        passthrough: false,
      });
    const other = as({ ...h.moderator.useCases, newRecords: new NewRecordGuess() });
    const mine = as({ ...h.moderator.useCases, newRecords: new NewRecordGuess() });
    const costOf = async (run: () => Promise<unknown>) => {
      const [appends, reads] = [await eventAppends(), await recordReads()];
      await run();
      return { appends: (await eventAppends()) - appends, reads: (await recordReads()) - reads };
    };
    const flagged = () => h.moderator.store.flagged.countFlagged(tenantId, userIdFor(tenantId, user.clientId));

    // A new compliant record of the user: not read.
    expect(await costOf(() => mine('new-with-user', 'fine'))).toEqual({ appends: 1, reads: 0 });
    // Another process flagged a record of the user's; this one has not seen it. A flag would move the count, which
    // the commit writes before its append: the record is read first, and the moderation commits once, not as new.
    await other('flagged-with-user', PROFANE);
    expect(await flagged()).toBe(1);
    expect(await costOf(() => mine('flagged-with-user', PROFANE))).toEqual({ appends: 1, reads: 1 });
    expect(await flagged()).toBe(1);
    const record = await h.call<unknown, Record__Output>('GetRecord', {
      tenantId,
      recordId: recordIdFor(tenantId, 'flagged-with-user'),
    });
    expect(record).toMatchObject({ status: 'Flagged' });
  });

  it('stops guessing while most records it has not seen exist: at most 21 wrong guesses of 40 such updates', async () => {
    const tenantId = await tenant();
    const other = otherProcess();
    for (let index = 0; index < 40; index += 1) await other(tenantId, `old-${index}`, 'fine');
    const mine = otherProcess();
    const conflicted: boolean[] = [];
    for (let index = 0; index < 40; index += 1) {
      const before = await eventAppends();
      await mine(tenantId, `old-${index}`, PROFANE);
      conflicted.push((await eventAppends()) - before === 2);
    }
    // The valve weighs the last 100 records it had not seen, once it knows 20: 21 that existed are over 20 %.
    const wrong = conflicted.filter(Boolean).length;
    expect(conflicted[0]).toBe(true);
    expect(wrong).toBeLessThanOrEqual(21);
    expect(conflicted.slice(wrong)).toEqual(Array.from({ length: 40 - wrong }, () => false));
  });

  it('answers INVALID_ARGUMENT for bad metadata, a bad cursor and a missing client id', async () => {
    const tenantId = await tenant();
    await expect(
      moderate({ tenantId, clientId: 'x', name: 'n', entity: 'post', content: content('a'), metadataJson: '[1]' }),
    ).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    const tooMany = Object.fromEntries(Array.from({ length: 51 }, (_, index) => [`k${index}`, 1]));
    await expect(
      moderate({
        tenantId,
        clientId: 'x',
        name: 'n',
        entity: 'post',
        content: content('a'),
        metadataJson: JSON.stringify(tooMany),
      }),
    ).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    await expect(
      moderate({ tenantId, clientId: '', name: 'n', entity: 'post', content: content('a') }),
    ).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    await expect(h.call('ListRecords', { tenantId, startingAfter: 'rec_nope' })).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
    });
    await expect(h.call('ListRecords', { tenantId, limit: 101 })).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
    });
  });

  it('pages oldest first with starting_after, ending_before and has_more', async () => {
    const tenantId = await tenant();
    const ids: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      ids.push(
        (await moderate({ tenantId, clientId: `p${index}`, name: 'n', entity: 'post', content: content('ok') }))
          .recordId,
      );
    }
    const list = (request: Record<string, unknown>) =>
      h.call<unknown, ListRecordsResponse__Output>('ListRecords', { tenantId, ...request });
    const first = await list({ limit: 2 });
    expect(first.records.map((record) => record.id)).toEqual(ids.slice(0, 2));
    expect(first.hasMore).toBe(true);
    const next = await list({ limit: 2, startingAfter: ids[1] });
    expect(next.records.map((record) => record.id)).toEqual(ids.slice(2, 4));
    const last = await list({ limit: 2, startingAfter: ids[3] });
    expect(last.records.map((record) => record.id)).toEqual(ids.slice(4));
    expect(last.hasMore).toBe(false);
    const before = await list({ limit: 2, endingBefore: ids[4] });
    expect(before.records.map((record) => record.id)).toEqual(ids.slice(2, 4));
    expect(before.hasMore).toBe(true);
  });

  it('checks that a projection it wrote is the newest on FerretDB, and trusts the write where writes are atomic', async () => {
    const tenantId = await tenant();
    const context = { tenantId, correlationId: 'atomic' };
    const res = await moderate({ tenantId, clientId: 'atomic', name: 'n', entity: 'post', content: content('fine') });
    /** Renames the record through `store`: the reads of the events collection that cost. */
    const renameThrough = async (store: EventStore, name: string) => {
      const loaded = await store.streams.loadRecord(res.recordId, false);
      const input = { clientId: 'atomic', name, entity: 'post', content: content('fine') };
      const before = await commandsTo('find', COLLECTIONS.events);
      await store.commit(
        stageRecord(loaded, { type: 'UpsertRecord', recordId: res.recordId, input, passthrough: false }, context),
      );
      return (await commandsTo('find', COLLECTIONS.events)) - before;
    };
    // The store here is FerretDB: asked, it says so, and each replace is followed by a read of the next version.
    expect(await renameThrough(new EventStore(h.db), 'asked')).toBe(1);
    expect(await renameThrough(new EventStore(h.db, { atomicWrites: true }), 'trusted')).toBe(0);
    const record = await h.call<unknown, Record__Output>('GetRecord', { tenantId, recordId: res.recordId });
    expect(record).toMatchObject({ name: 'trusted' });
  });
});

describe('users', () => {
  const flagPost = (tenantId: string, clientId: string, user: Record<string, unknown>, text = PROFANE) =>
    moderate({ tenantId, clientId, name: 'n', entity: 'post', content: content(text), user });
  const getUser = (tenantId: string, userId: string) => h.call<unknown, User__Output>('GetUser', { tenantId, userId });
  /** The user's status in the webhook view of the record's latest moderation (automatic or a person's). */
  const viewedUser = async (recordId: string) => {
    const [latest] = await h.db
      .collection<{ data: { view?: { user?: { status?: string } } } }>(COLLECTIONS.events)
      .find({ stream: `record-${recordId}`, type: 'RecordModerated' })
      .sort({ version: -1 })
      .limit(1)
      .toArray();
    return latest?.data.view?.user?.status;
  };

  it('suspends at the threshold and reinstates when the flagged record becomes compliant', async () => {
    const tenantId = await tenant();
    await h.db
      .collection<{ _id: string; [field: string]: unknown }>(COLLECTIONS.settings)
      .insertOne({ _id: tenantId, suspensionThreshold: 2 });
    const first = await flagPost(tenantId, 'a', { clientId: 'u' });
    const userId = first.userId ?? '';
    expect((await getUser(tenantId, userId)).status).toBeUndefined();
    const second = await flagPost(tenantId, 'b', { clientId: 'u' });
    expect(await getUser(tenantId, userId)).toMatchObject({ status: 'Suspended', flaggedRecordsCount: 2 });
    // The record's webhook view shows the user as this moderation left them (suspended by it, then reinstated).
    expect(await viewedUser(second.recordId)).toBe('Suspended');
    await flagPost(tenantId, 'b', { clientId: 'u' }, 'all good now');
    expect(await getUser(tenantId, userId)).toMatchObject({
      status: 'Compliant',
      statusUpdatedVia: 'Automation All Compliant',
      flaggedRecordsCount: 1,
    });
    expect(await viewedUser(second.recordId)).toBe('Compliant');
  });

  it('keeps a manual status against automation and never suspends a protected user', async () => {
    const tenantId = await tenant();
    const res = await flagPost(tenantId, 'a', { clientId: 'm' });
    const userId = res.userId ?? '';
    await h.call('SetUserStatus', { tenantId, userId, status: 'Compliant', reason: 'reviewed', actor: 'alice' });
    await flagPost(tenantId, 'b', { clientId: 'm' });
    expect(await getUser(tenantId, userId)).toMatchObject({ status: 'Compliant', statusUpdatedVia: 'Manual' });

    const prot = await flagPost(tenantId, 'c', { clientId: 'p', protected: true });
    expect((await getUser(tenantId, prot.userId ?? '')).status).toBeUndefined();
    const refused = await h
      .call('SetUserStatus', { tenantId, userId: prot.userId, status: 'Banned', reason: 'x', actor: 'a' })
      .then(
        () => undefined,
        (err: grpc.ServiceError) => err,
      );
    expect(refused?.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(refused?.metadata.get('vigil-error-code')).toEqual(['protected']);
  });

  it('keeps a manual record decision against automatic moderation', async () => {
    const tenantId = await tenant();
    const res = await flagPost(tenantId, 'a', { clientId: 'r' });
    expect(await viewedUser(res.recordId)).toBe('Suspended');
    await h.call('ModerateRecordManually', {
      tenantId,
      recordId: res.recordId,
      status: 'Compliant',
      reason: 'satire',
      actor: 'bob',
    });
    expect((await getUser(tenantId, res.userId ?? '')).status).toBe('Compliant');
    // The decision's webhook view shows the user it reinstated, as an automatic moderation's does.
    expect(await viewedUser(res.recordId)).toBe('Compliant');
    const again = await flagPost(tenantId, 'a', { clientId: 'r' });
    // The answer agrees with itself: the person's status and reason, no rule that flagged.
    expect(again).toMatchObject({ status: 'Compliant', flagged: false, reasons: ['satire'], rules: [] });
  });

  it('opens an appeal once and approving it reinstates the user', async () => {
    const tenantId = await tenant();
    const res = await flagPost(tenantId, 'a', { clientId: 'ap' });
    const userId = res.userId ?? '';
    const appeal = await h.call<unknown, Appeal__Output>('CreateAppeal', { tenantId, userId, text: 'I fixed it' });
    expect(appeal.status).toBe('Open');
    await expect(h.call('CreateAppeal', { tenantId, userId, text: 'again' })).rejects.toMatchObject({
      code: grpc.status.ABORTED,
    });
    const decided = await h.call<unknown, Appeal__Output>('DecideAppeal', {
      tenantId,
      appealId: appeal.id,
      decision: 'Approved',
      reason: 'ok',
      actor: 'bob',
    });
    expect(decided.status).toBe('Approved');
    expect(await getUser(tenantId, userId)).toMatchObject({
      status: 'Compliant',
      statusUpdatedVia: 'Automation Appeal Approved',
    });
  });

  it('stores test-mode moderations without changing the user', async () => {
    const tenantId = await tenant();
    await h.db
      .collection<{ _id: string; [field: string]: unknown }>(COLLECTIONS.settings)
      .insertOne({ _id: tenantId, testMode: true });
    const res = await flagPost(tenantId, 'a', { clientId: 't' });
    expect(res).toMatchObject({ status: 'Flagged', testMode: true });
    expect((await getUser(tenantId, res.userId ?? '')).status).toBeUndefined();
  });
});

describe('rebuild-projections', () => {
  it('rebuilds records, users and appeals equal to the originals', async () => {
    await waitFor(async () => (await h.db.collection(COLLECTIONS.records).countDocuments()) > 0);
    const snapshot = async () =>
      Object.fromEntries(
        await Promise.all(
          [COLLECTIONS.records, COLLECTIONS.users, COLLECTIONS.userFlaggedCounts, COLLECTIONS.appeals].map(
            async (name) => [name, await h.db.collection(name).find({}).sort({ _id: 1 }).toArray()],
          ),
        ),
      );
    const before = await snapshot();
    const report = await rebuildProjections(h.moderator.store);
    expect(report.records).toBe(before[COLLECTIONS.records].length);
    expect(await snapshot()).toEqual(before);
  });
});
