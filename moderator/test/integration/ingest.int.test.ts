import { COLLECTIONS, HEADERS, recordIdFor, userIdFor, type Command } from '@vigil/proto';
import { recordStream } from '../../src/domain/stream-names';
import { CONSUMER_TIMING_DEFAULTS, ensureTopics } from '@vigil/proto/platform';
import type { KafkaMessage, Producer } from 'kafkajs';
import { TopicReaders, uniqueName, waitFor } from '../../../deploy/test-support';
import type { Db } from 'mongodb';
import pino from 'pino';
import { ulid } from 'ulid';
import { stageRecord } from '../../src/domain/stream';
import { createEngine, ProviderError } from '../../src/engine';
import { moderate } from '../../src/service/moderate';
import { OutboxRelay } from '../../src/outbox/outbox-relay';
import { DeadLetterStore } from '../../src/store/dead-letter-store';
import { EventStore, type EventDoc } from '../../src/store/event-store';
import { isMarker } from '../../src/store/outbox-store';
import { content, ingestCommand, startHarness, type Harness } from './harness';

let h: Harness;
let producer: Producer;

beforeAll(async () => {
  h = await startHarness();
  producer = h.kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
});
afterAll(async () => {
  await producer.disconnect();
  await h.close();
});

const tenant = (on?: Harness) => (on ?? h).newTenant();
const PROFANE = 'what a fucking mess';

async function send(key: string, ...values: (Command | string)[]): Promise<void> {
  await producer.send({
    topic: h.topics.ingest,
    acks: -1,
    messages: values.map((value) => ({ key, value: typeof value === 'string' ? value : JSON.stringify(value) })),
  });
}

const recordOf = (tenantId: string, clientId: string) =>
  h.db.collection(COLLECTIONS.records).findOne({ _id: recordIdFor(tenantId, clientId) } as never);

/** An upsert of the record `clientId` (content 'fine'), staged on what was loaded of it. */
const stageOne = (tenantId: string, clientId: string, loaded: Parameters<typeof stageRecord>[0]) =>
  stageRecord(
    loaded,
    {
      type: 'UpsertRecord',
      recordId: recordIdFor(tenantId, clientId),
      input: { clientId, name: 'n', entity: 'post', content: content('fine') },
      passthrough: false,
    },
    { tenantId, correlationId: 'c' },
  );

/** The command id of a dead letter, or '' for one that is not a JSON command (the poison test sends such). */
function idOf(message: KafkaMessage): string {
  try {
    return (JSON.parse(message.value?.toString() ?? '') as { id?: string }).id ?? '';
  } catch {
    return '';
  }
}
const eventsOf = (recordId: string) =>
  h.db
    .collection(COLLECTIONS.events)
    .find({ stream: recordStream(recordId) })
    .sort({ version: 1 })
    .toArray();

describe('ingest consumer', () => {
  it("exports its partitions' lag, its assignment, its rebalances and when it last fetched and handled a batch", async () => {
    const startedAt = Date.now() / 1000;
    const tenantId = await tenant();
    await send('metrics', ingestCommand(tenantId, 'metrics', 'hello'));
    await waitFor(() => recordOf(tenantId, 'metrics'), { what: 'the record' });
    const value = async (name: string) => (await h.registry.getSingleMetric(name)?.get())?.values ?? [];
    const ingest = { topic: h.topics.ingest };
    await waitFor(
      async () => (await value('moderator_ingest_consumer_last_batch_timestamp_seconds'))[0]!.value >= startedAt,
      { what: 'a batch handled' },
    );
    const lag = await value('moderator_ingest_consumer_lag_messages');
    expect(lag.length).toBeGreaterThanOrEqual(1);
    for (const series of lag) {
      expect(series.labels).toMatchObject(ingest);
      expect(Number(series.labels.partition)).toBeLessThan(3);
      expect(series.value).toBeGreaterThanOrEqual(0);
    }
    expect(await value('moderator_ingest_consumer_assigned_partitions')).toEqual([
      expect.objectContaining({ labels: ingest, value: 3 }),
    ]);
    expect((await value('moderator_ingest_consumer_rebalances_total'))[0]!.value).toBeGreaterThanOrEqual(1);
    await waitFor(
      async () => (await value('moderator_ingest_consumer_last_fetch_timestamp_seconds'))[0]!.value >= startedAt,
      { what: 'a fetch' },
    );
  });

  it('applies a command delivered twice once', async () => {
    const tenantId = await tenant();
    const command = ingestCommand(tenantId, 'twice', 'hello');
    // Same key: same partition, so the sentinel is processed after both copies.
    await send('twice', command, command, ingestCommand(tenantId, 'sentinel', 'hello'));
    await waitFor(() => recordOf(tenantId, 'sentinel'), { what: 'sentinel record' });
    const events = await eventsOf(recordIdFor(tenantId, 'twice'));
    expect(events.map((event) => event.type)).toEqual(['RecordUpserted', 'RecordModerated']);
    expect(events.map((event) => (event.data as { commandId?: string }).commandId)).toEqual([command.id, command.id]);
  });

  it('re-moderates a re-ingested record with a new command', async () => {
    const tenantId = await tenant();
    await send('again', ingestCommand(tenantId, 'again', 'hello'), ingestCommand(tenantId, 'again', PROFANE));
    const record = await waitFor(
      async () => {
        const doc = await recordOf(tenantId, 'again');
        return doc?.version === 4 ? doc : undefined;
      },
      { what: 'second moderation' },
    );
    expect(record.status).toBe('Flagged');
  });

  it('dead-letters invalid JSON and invalid commands with a reason, then moves on', async () => {
    const tenantId = await tenant();
    const dead = await h.collect(h.topics.ingestDeadLetter);
    const badMetadata = ingestCommand(tenantId, 'meta', 'x');
    if (badMetadata.type === 'IngestRecord') badMetadata.data.metadata = { 'bad[key]': 1 };
    await send(
      'poison',
      '{not json',
      JSON.stringify({ id: 'x', type: 'IngestRecord' }),
      badMetadata,
      ingestCommand(tenantId, 'after-poison', 'ok'),
    );
    await waitFor(() => recordOf(tenantId, 'after-poison'), { what: 'record after the poison' });
    await waitFor(() => dead.length >= 3, { what: 'dead letters' });
    const reasons = dead.map((message) => message.headers?.[HEADERS.deadLetterReason]?.toString());
    expect(reasons[0]).toBe('invalid_json');
    expect(reasons[1]).toMatch(/^invalid_command: /);
    expect(reasons[2]).toBe('validation_error');
    expect(dead[0]?.value?.toString()).toBe('{not json');
    expect(await recordOf(tenantId, 'meta')).toBeNull();
    const counted = await h.registry.getSingleMetric('moderator_ingest_dead_letters_total')?.get();
    expect(Object.fromEntries(counted?.values.map((value) => [value.labels.reason, value.value]) ?? [])).toEqual({
      invalid_json: 1,
      invalid_command: 1,
      validation_error: 1,
    });
  });

  it('dead-letters commands for an unknown tenant as unknown_tenant, stores nothing for it, then moves on', async () => {
    const known = await tenant();
    const unknown = `ten_${uniqueName('ghost')}`;
    const dead = await h.collect(h.topics.ingestDeadLetter);
    const ghost = ingestCommand(unknown, 'ghost', 'hello');
    const ghostUser: Command = {
      id: uniqueName('cmd'),
      type: 'IngestUser',
      tenantId: unknown,
      issuedAt: new Date().toISOString(),
      correlationId: 'c',
      data: { clientId: 'ghost-user' },
    };
    await send('ghost', ghost, ghostUser, ingestCommand(known, 'after-ghost', 'ok'));
    await waitFor(() => recordOf(known, 'after-ghost'), { what: 'record after the unknown tenant' });
    const ours = () => dead.filter((message) => [ghost.id, ghostUser.id].includes(idOf(message)));
    await waitFor(() => ours().length >= 2, { what: 'dead letters of the unknown tenant' });
    expect(ours().map((message) => message.headers?.[HEADERS.deadLetterReason]?.toString())).toEqual([
      'unknown_tenant',
      'unknown_tenant',
    ]);
    expect(await h.db.collection(COLLECTIONS.events).countDocuments({ tenantId: unknown })).toBe(0);
  });

  it('suspends on a flagged ingest and reinstates when the record is deleted', async () => {
    const tenantId = await tenant();
    const userId = userIdFor(tenantId, 'del-user');
    const users = h.db.collection(COLLECTIONS.users);
    await send('del', ingestCommand(tenantId, 'del', PROFANE, 'del-user'));
    await waitFor(async () => (await users.findOne({ _id: userId } as never))?.status === 'Suspended', {
      what: 'suspension',
    });
    const remove: Command = {
      id: uniqueName('cmd'),
      type: 'DeleteRecord',
      tenantId,
      issuedAt: new Date().toISOString(),
      correlationId: 'c',
      data: { clientId: 'del' },
    };
    await send('del', remove, remove);
    const user = await waitFor(
      async () => {
        const doc = await users.findOne({ _id: userId } as never);
        return doc?.status === 'Compliant' ? doc : undefined;
      },
      { what: 'reinstatement' },
    );
    expect(user.statusUpdatedVia).toBe('Automation All Compliant');
    // A count of 0 is stored as no document.
    expect(await h.db.collection(COLLECTIONS.userFlaggedCounts).findOne({ _id: userId } as never)).toBeNull();
    const events = await eventsOf(recordIdFor(tenantId, 'del'));
    expect(events.filter((event) => event.type === 'RecordDeleted')).toHaveLength(1);
  });
});

describe('outbox relay', () => {
  it('publishes every event once per stream in version order with its id and type headers, and empties the outbox', async () => {
    const published = await h.collect(h.topics.events);
    const tenantId = await tenant();
    const ids: string[] = [];
    for (let index = 0; index < 4; index += 1) {
      const res = await moderate(h.moderator.useCases, {
        tenantId,
        correlationId: 'c',
        clientId: 'ordered',
        name: 'n',
        entity: 'post',
        content: content(index % 2 ? PROFANE : 'fine'),
        passthrough: false,
      });
      ids.push(res.recordId);
    }
    const stream = recordStream(ids[0] ?? '');
    const ofStream = () => published.filter((message) => message.key?.toString() === stream);
    await waitFor(() => ofStream().length >= 8, { what: 'relayed events' });
    const envelopes = ofStream().map(
      (message) => JSON.parse(message.value?.toString() ?? '') as { id: string; type: string; version: number },
    );
    expect(envelopes.map((event) => event.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    for (const [index, message] of ofStream().entries()) {
      expect(message.headers?.[HEADERS.eventId]?.toString()).toBe(envelopes[index]?.id);
      expect(message.headers?.[HEADERS.eventType]?.toString()).toBe(envelopes[index]?.type);
    }
    // The markers of the slots the events were appended in go once the slots are published.
    const slots = (await h.db.collection<EventDoc>(COLLECTIONS.events).distinct('slot', { stream })).filter(
      (slot): slot is string => typeof slot === 'string',
    );
    expect(slots.length).toBeGreaterThan(0);
    const outbox = h.db.collection<{ _id: string }>(COLLECTIONS.outbox);
    await waitFor(async () => (await outbox.countDocuments({ _id: { $in: slots } })) === 0, {
      what: 'outbox markers removed',
    });
    // Published from memory, not by a sweep.
    expect(ofStream().filter((message) => message.headers?.[HEADERS.replayed] !== undefined)).toEqual([]);
    // Events themselves are never rewritten to say they went out.
    expect(await h.db.collection(COLLECTIONS.events).countDocuments({ stream, published: { $exists: true } })).toBe(0);
  });
});

/** A relay on `store`'s outbox (in `db`), publishing to `topic`: no gap between batches, 100 events a batch unless given. */
function relayOn(
  db: Db,
  store: EventStore,
  topic: string,
  options: { pollMs: number; batchSize?: number; memoryBytes?: number; log?: pino.Logger },
): OutboxRelay {
  return new OutboxRelay({
    outbox: store.outbox,
    deadLetters: new DeadLetterStore(db),
    createProducer: () => h.kafka.producer({ idempotent: true, maxInFlightRequests: 1 }),
    topic,
    log: pino({ level: 'silent' }),
    minGapMs: 0,
    batchSize: 100,
    ...options,
  });
}

describe('outbox relay with a backlog', () => {
  it('publishes 300 outbox copies of the previous release in one batch, looking each up, and empties the outbox', async () => {
    const tenantId = await tenant();
    for (let start = 0; start < 150; start += 10) {
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          moderate(h.moderator.useCases, {
            tenantId,
            correlationId: 'c',
            clientId: `backlog-${start + i}`,
            name: 'n',
            entity: 'post',
            content: content('fine'),
            passthrough: false,
          }),
        ),
      );
    }
    const docs = await h.db.collection<EventDoc>(COLLECTIONS.events).find({ tenantId }).toArray();
    expect(docs).toHaveLength(300);

    // The same events, unpublished, in a store of their own, relayed to a topic of their own in one batch.
    const db = h.mongo.db(uniqueName('backlog'));
    const topic = uniqueName('backlog');
    const admin = h.kafka.admin();
    await admin.connect();
    try {
      await ensureTopics(h.kafka, [topic], 1);
      const store = new EventStore(db);
      const events = db.collection<EventDoc>(COLLECTIONS.events);
      const outbox = db.collection<EventDoc>(COLLECTIONS.outbox);
      // As the previous release stored them: events without a slot, each copied into the outbox in a slot of its own.
      const slot = `${ulid()}:${Math.floor(Date.now() / 1000)}`;
      await events.insertMany(docs.map(({ slot: _, ...doc }) => doc));
      await outbox.insertMany(docs.map(({ slot: _, ...doc }) => ({ ...doc, slot })));
      const relay = relayOn(db, store, topic, { pollMs: 100, batchSize: 300 });
      expect(await relay.publishBatch()).toBe(300);
      await relay.stop();
      expect(await outbox.countDocuments({})).toBe(0);
      const offsets = await admin.fetchTopicOffsets(topic);
      expect(offsets.map((offset) => Number(offset.high))).toEqual([300]);
    } finally {
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin.disconnect();
      await db.dropDatabase().catch(() => undefined);
    }
  });
});

describe('outbox relay, events handed over in memory', () => {
  /** A store and a topic of their own, a relay on them, and appends of one record each. */
  async function world(options: { pollMs: number; memoryBytes?: number }) {
    const db = h.mongo.db(uniqueName('handover'));
    const topic = uniqueName('handover');
    const admin = h.kafka.admin();
    await admin.connect();
    await ensureTopics(h.kafka, [topic], 1);
    // One store for the appends and the relay, as in the service: the relay knows the slots of its appends.
    const store = new EventStore(db);
    // The relay's log, kept to be shown when a wait times out.
    const logged: string[] = [];
    const log = pino({ level: 'debug' }, { write: (line: string) => logged.push(line) });
    const relay = relayOn(db, store, topic, { ...options, log });
    await store.ensureIndexes();
    const tenantId = `ten_${uniqueName('t')}`;
    return {
      relay,
      topic,
      db,
      store,
      events: db.collection<EventDoc>(COLLECTIONS.events),
      outbox: db.collection<EventDoc>(COLLECTIONS.outbox),
      high: async () => Number((await admin.fetchTopicOffsets(topic))[0]?.high ?? 0),
      /** Waits for `condition`; on a time-out, the relay's log goes to stderr with the error. */
      waitLogged: (condition: () => Promise<boolean>, what: string) =>
        waitFor(condition, { timeoutMs: 30000, what }).catch((err: unknown) => {
          process.stderr.write(`relay log:\n${logged.slice(-200).join('')}`);
          throw err;
        }),
      /** Appends one record's upsert, through this world's store or (`from`) another process's. */
      append: async (clientId: string, from = store) => {
        const loaded = await from.streams.loadRecord(recordIdFor(tenantId, clientId), false);
        return from.commit(stageOne(tenantId, clientId, loaded));
      },
      close: async () => {
        await relay.stop();
        await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
        await admin.disconnect();
        await db.dropDatabase().catch(() => undefined);
      },
    };
  }

  it("publishes this process's appends without a sweep, and leaves other processes' fresh appends to them", async () => {
    // One sweep at start, then none for an hour: only the in-memory path can publish.
    const w = await world({ pollMs: 3_600_000 });
    try {
      // Appended by "another process" (a store of its own): unpublished, fresh, never handed over here.
      const elsewhere = new EventStore(w.db);
      for (let i = 0; i < 5; i += 1) await w.append(`other-${i}`, elsewhere);
      w.relay.start();
      for (let i = 0; i < 10; i += 1) w.relay.appended(await w.append(`mine-${i}`));

      await waitFor(async () => (await w.high()) === 10, {
        timeoutMs: 30000,
        what: 'the handed-over events on the topic',
      });
      // The markers of this process's slots go once their seconds are over; the other process's stay.
      const othersSlot = `${elsewhere.outbox.instanceId}:`;
      await w.waitLogged(
        async () => (await w.outbox.find({}).toArray()).every((doc) => doc._id.startsWith(othersSlot)),
        "this process's markers out of the outbox",
      );
      const left = (await w.outbox.find({}).toArray()).map((doc) => doc._id);
      expect(left.length).toBeGreaterThan(0);
      const unpublished = await w.events.find({ slot: { $in: left } }).toArray();
      expect(unpublished.map((doc) => (doc.type === 'RecordUpserted' ? doc.data.clientId : doc.type)).sort()).toEqual([
        'other-0',
        'other-1',
        'other-2',
        'other-3',
        'other-4',
      ]);

      // A wake (a replay, say) sweeps at once, whatever the age, and marks what it published as replayed.
      const seen = await h.collect(w.topic);
      w.relay.wake();
      await waitFor(async () => (await w.high()) === 15, { timeoutMs: 30000, what: 'the swept events on the topic' });
      await waitFor(() => seen.length >= 15, { timeoutMs: 30000, what: 'the topic read' });
      const replayed = seen.filter((message) => message.headers?.[HEADERS.replayed]?.toString() === '1');
      expect(replayed.map((message) => String(message.headers?.[HEADERS.eventId])).sort()).toEqual(
        unpublished.map((doc) => doc._id).sort(),
      );
    } finally {
      await w.close();
    }
  });

  it('keeps at most memoryBytes in memory and publishes the appends past it from the store, in order', async () => {
    // Room for about two events; no routine sweep for an hour.
    const bound = 1_000;
    const w = await world({ pollMs: 3_600_000, memoryBytes: bound });
    const readers = new TopicReaders(h.kafka);
    try {
      const seen = await readers.collect(w.topic);
      const batches = [];
      for (let i = 0; i < 20; i += 1) batches.push(await w.append(`burst-${i}`));
      const appended = batches.flat();
      // Far more than the bound: most of them can only go out through the store.
      expect(appended.reduce((sum, event) => sum + JSON.stringify(event).length, 0)).toBeGreaterThan(5 * bound);
      w.relay.start();
      let peak = 0;
      // Handed over back to back, before the relay can drain any.
      for (const events of batches) {
        w.relay.appended(events);
        peak = Math.max(peak, w.relay.memoryQueued);
      }
      expect(peak).toBeGreaterThan(0);
      expect(peak).toBeLessThanOrEqual(bound);
      await waitFor(() => seen.length >= 20, { timeoutMs: 30000, what: 'every append on the topic' });
      await w.waitLogged(async () => (await w.outbox.countDocuments({})) === 0, 'every append out of the outbox');
      expect(seen.map((message) => String(message.headers?.[HEADERS.eventId]))).toEqual(
        appended.map((event) => event.id),
      );
    } finally {
      await readers.disconnect();
      await w.close();
    }
  });
});

describe('the outbox collection', () => {
  it('keeps no copy of an event a conflict kept out, and publishes neither an old nor a young copy without its event', async () => {
    const db = h.mongo.db(uniqueName('orphans'));
    const topic = uniqueName('orphans');
    const admin = h.kafka.admin();
    await admin.connect();
    const readers = new TopicReaders(h.kafka);
    try {
      await ensureTopics(h.kafka, [topic], 1);
      const store = new EventStore(db);
      await store.ensureIndexes();
      const outbox = db.collection<EventDoc>(COLLECTIONS.outbox);
      const tenantId = `ten_${uniqueName('t')}`;
      // Two writers decide on the same loaded stream: the second loses, and its copy goes again.
      const loaded = await store.streams.loadRecord(recordIdFor(tenantId, 'raced'), false);
      const [winner] = await store.commit(stageOne(tenantId, 'raced', loaded));
      const loser = stageOne(tenantId, 'raced', loaded);
      await expect(store.commit(loser)).rejects.toThrow('stream version taken');
      // The outbox holds the markers of the appends' slots, no copy.
      expect((await outbox.find({}).toArray()).filter((doc) => !isMarker(doc))).toEqual([]);

      // Copies whose appends never happened (a crash between the two writes): one from ten minutes ago, one fresh.
      const orphan = (clientId: string, at: number): EventDoc => {
        const event = stageOne(tenantId, clientId, { ...loaded, stream: recordStream(recordIdFor(tenantId, clientId)) })
          .events[0]!;
        const id = ulid(at);
        return { ...event, _id: id, id };
      };
      const old = orphan('old', Date.now() - 10 * 60 * 1000);
      const young = orphan('young', Date.now());
      await outbox.insertMany([old, young]);

      const seen = await readers.collect(topic);
      const relay = relayOn(db, store, topic, { pollMs: 3_600_000 });
      // The winner was appended by "another process" (never handed over): it is looked up, found and published.
      expect(await relay.publishBatch()).toBe(1);
      await relay.stop();
      await waitFor(() => seen.length >= 1, { what: 'the stored event on the topic' });
      expect(seen.map((message) => String(message.headers?.[HEADERS.eventId]))).toEqual([winner!.id]);
      // The old copy is dropped, the young one waits: its append may still be in flight.
      expect((await outbox.find({}).toArray()).filter((doc) => !isMarker(doc)).map((doc) => doc._id)).toEqual([
        young._id,
      ]);
    } finally {
      await readers.disconnect();
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin.disconnect();
      await db.dropDatabase().catch(() => undefined);
    }
  });

  it('moves events flagged unpublished by an earlier release into the outbox when the store starts', async () => {
    const db = h.mongo.db(uniqueName('legacy'));
    try {
      const tenantId = `ten_${uniqueName('t')}`;
      const fresh = new EventStore(db);
      const staged = stageOne(
        tenantId,
        'legacy',
        await fresh.streams.loadRecord(recordIdFor(tenantId, 'legacy'), false),
      );
      const [event] = staged.events;
      const events = db.collection<EventDoc>(COLLECTIONS.events);
      // As the earlier release stored them: one still to publish, one published.
      await events.insertMany([
        { ...event!, _id: event!.id, published: false },
        { ...event!, _id: 'published-one', id: 'published-one', version: 9, published: true },
      ]);
      await new EventStore(db).ensureIndexes();
      expect((await db.collection<EventDoc>(COLLECTIONS.outbox).find({}).toArray()).map((doc) => doc._id)).toEqual([
        event!.id,
      ]);
      expect(await events.countDocuments({ published: false })).toBe(0);
      // Idempotent: a second start moves nothing more.
      await new EventStore(db).ensureIndexes();
      expect(await db.collection(COLLECTIONS.outbox).countDocuments({})).toBe(1);
    } finally {
      await db.dropDatabase().catch(() => undefined);
    }
  });
});

describe('ingest consumer with a failing provider', () => {
  let flaky: Harness;
  let failuresLeft = 3;
  beforeAll(async () => {
    const engine = createEngine({});
    flaky = await startHarness(
      { KAFKA_GROUP_ID: uniqueName('flaky') },
      {
        moderate: async (input, rules, signal) => {
          if (failuresLeft > 0) {
            failuresLeft -= 1;
            throw new ProviderError('provider answered 503', true);
          }
          return engine.moderate(input, rules, signal);
        },
      },
    );
  });
  afterAll(async () => {
    await flaky.close();
  });

  it('retries a transient failure without skipping the command, and stores it once', async () => {
    const tenantId = await tenant(flaky);
    const command = ingestCommand(tenantId, 'flaky', PROFANE);
    const local = flaky.kafka.producer();
    await local.connect();
    try {
      await local.send({
        topic: flaky.topics.ingest,
        acks: -1,
        messages: [{ key: 'flaky', value: JSON.stringify(command) }],
      });
    } finally {
      await local.disconnect();
    }
    const record = await waitFor(
      () => flaky.db.collection(COLLECTIONS.records).findOne({ _id: recordIdFor(tenantId, 'flaky') } as never),
      { what: 'record after retries' },
    );
    expect(failuresLeft).toBe(0);
    expect(record.status).toBe('Flagged');
    expect(
      await flaky.db
        .collection(COLLECTIONS.events)
        .countDocuments({ stream: recordStream(recordIdFor(tenantId, 'flaky')) }),
    ).toBe(2);
  });
});

describe('ingest consumer, records of one partition', () => {
  let harness: Harness;
  const order: string[] = [];
  beforeAll(async () => {
    const engine = createEngine({});
    harness = await startHarness(
      { KAFKA_GROUP_ID: uniqueName('lanes') },
      {
        moderate: async (input, rules, signal) => {
          const text = input.text ?? '';
          if (text.startsWith('held')) {
            // Waits for the record behind it in the partition, for 20 s at most (then the order below fails).
            await waitFor(() => order.includes('later one'), { timeoutMs: 20000, what: 'the later record' }).catch(
              () => undefined,
            );
          }
          const result = await engine.moderate(input, rules, signal);
          order.push(text);
          return result;
        },
      },
    );
  });
  afterAll(async () => {
    await harness.close();
  });

  it('moderates a record while another record before it in the partition is still being moderated', async () => {
    const tenantId = await tenant(harness);
    const local = harness.kafka.producer();
    await local.connect();
    try {
      await local.send({
        topic: harness.topics.ingest,
        acks: -1,
        messages: [
          { key: 'held', partition: 0, value: JSON.stringify(ingestCommand(tenantId, 'held', 'held one')) },
          { key: 'held', partition: 0, value: JSON.stringify(ingestCommand(tenantId, 'held', 'held two')) },
          { key: 'later', partition: 0, value: JSON.stringify(ingestCommand(tenantId, 'later', 'later one')) },
        ],
      });
    } finally {
      await local.disconnect();
    }
    await waitFor(() => order.length === 3, { timeoutMs: 60000, what: 'three moderations' });
    // Another key overtakes; the commands of one key keep their order.
    expect(order).toEqual(['later one', 'held one', 'held two']);
    // Both commands of the held record stored: upserted and moderated twice.
    await waitFor(
      async () =>
        (
          await harness.db
            .collection(COLLECTIONS.records)
            .findOne({ _id: recordIdFor(tenantId, 'held'), version: 4 } as never)
        )?.version === 4,
      { timeoutMs: 30000, what: 'the held record at version 4' },
    );
  });
});

describe('ingest consumer, one moderation longer than the session', () => {
  let slow: Harness;
  let started = 0;
  // The harness runs with the configuration's defaults.
  const sessionMs = CONSUMER_TIMING_DEFAULTS.sessionTimeoutMs;
  beforeAll(async () => {
    const engine = createEngine({});
    slow = await startHarness(
      { KAFKA_GROUP_ID: uniqueName('slow') },
      {
        moderate: async (input, rules, signal) => {
          if (input.text === 'slow') {
            // A provider that takes one and a half sessions to answer.
            started = Date.now();
            await new Promise((resolve) => setTimeout(resolve, sessionMs * 1.5));
          }
          return engine.moderate(input, rules, signal);
        },
      },
    );
  });
  afterAll(async () => {
    await slow.close();
  });

  it('keeps its partitions: it heartbeats while the batch is worked on', async () => {
    const tenantId = await tenant(slow);
    const local = slow.kafka.producer();
    await local.connect();
    try {
      await local.send({
        topic: slow.topics.ingest,
        acks: -1,
        messages: [{ key: 'slow', value: JSON.stringify(ingestCommand(tenantId, 'slow', 'slow')) }],
      });
    } finally {
      await local.disconnect();
    }
    await waitFor(
      () => slow.db.collection(COLLECTIONS.records).findOne({ _id: recordIdFor(tenantId, 'slow') } as never),
      {
        timeoutMs: 60000,
        what: 'the slow record',
      },
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(sessionMs);
    // One join, at start: the group never dropped the member, so it never re-joined.
    const joins = await slow.registry.getSingleMetric('moderator_ingest_consumer_rebalances_total')?.get();
    expect(joins?.values[0]?.value).toBe(1);
    expect(slow.logText()).not.toContain('The coordinator is not aware of this member');
  });
});
