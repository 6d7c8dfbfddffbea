import { COLLECTIONS, HEADERS, recordIdFor } from '@vigil/proto';
import { ensureTopics } from '@vigil/proto/platform';
import { Kafka, logLevel, type Admin, type KafkaMessage } from 'kafkajs';
import { MongoClient, type Db } from 'mongodb';
import pino from 'pino';
import { ulid } from 'ulid';
import { startStoreRelay } from '../../../deploy/test-support/store-relay';
import { testServers, TopicReaders, uniqueName, waitFor } from '../../../deploy/test-support';
import { stageRecord } from '../../src/domain/stream';
import { OutboxRelay } from '../../src/outbox/outbox-relay';
import { DeadLetterStore } from '../../src/store/dead-letter-store';
import { EventStore, type EventDoc } from '../../src/store/event-store';
import { content } from './harness';

// The outbox of slot markers against a real store and broker: what a process that stops at any point between a
// marker, its append and the publish leaves is published by another process's sweep (marked replayed), and the
// markers go; a marker insert whose reply was lost fails its append and is taken out all the same; copies of the
// previous release are drained.

const servers = testServers();
const mongo = new MongoClient(servers.mongoUrl, { serverSelectionTimeoutMS: 5000 });
const kafka = new Kafka({ clientId: 'outbox-slots-test', brokers: servers.kafkaBrokers, logLevel: logLevel.NOTHING });
const readers = new TopicReaders(kafka);
let admin: Admin;
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  await mongo.connect();
  admin = kafka.admin();
  await admin.connect();
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

afterAll(async () => {
  await readers.disconnect();
  await admin.disconnect();
  await mongo.close();
});

/** A database and a one-partition topic of their own, with what the topic carried. */
async function world(): Promise<{ db: Db; topic: string; seen: KafkaMessage[]; tenantId: string }> {
  const db = mongo.db(uniqueName('slots'));
  const topic = uniqueName('slots');
  await ensureTopics(kafka, [topic], 1);
  cleanups.push(
    () => db.dropDatabase(),
    () => admin.deleteTopics({ topics: [topic] }),
  );
  await new EventStore(db).ensureIndexes();
  return { db, topic, seen: await readers.collect(topic), tenantId: `ten_${uniqueName('t')}` };
}

/** A relay on `store`, sweeping every 100–200 ms, stopped after the test. */
function relayOn(
  db: Db,
  store: EventStore,
  topic: string,
  options: { appendBoundMs: number; pollMs?: number; logged?: string[] },
): OutboxRelay {
  const { logged, ...timing } = options;
  const relay = new OutboxRelay({
    outbox: store.outbox,
    deadLetters: new DeadLetterStore(db),
    createProducer: () => kafka.producer({ idempotent: true, maxInFlightRequests: 1 }),
    topic,
    // With `logged`, the relay's log down to debug is kept there, to be shown when a wait times out.
    log: logged ? pino({ level: 'debug' }, { write: (line: string) => logged.push(line) }) : pino({ level: 'silent' }),
    pollMs: 100,
    sweepMaxMs: 200,
    minGapMs: 0,
    batchSize: 100,
    ...timing,
  });
  cleanups.push(() => relay.stop());
  return relay;
}

/** Commits one record's upsert through `store`; the events appended. */
async function commitRecord(store: EventStore, tenantId: string, clientId: string) {
  const recordId = recordIdFor(tenantId, clientId);
  const loaded = await store.streams.loadRecord(recordId, false);
  return store.commit(
    stageRecord(
      loaded,
      {
        type: 'UpsertRecord',
        recordId,
        input: { clientId, name: 'n', entity: 'post', content: content('fine') },
        passthrough: false,
      },
      { tenantId, correlationId: 'c' },
    ),
  );
}

const idOf = (message: KafkaMessage) => String(message.headers?.[HEADERS.eventId]);
const replayed = (message: KafkaMessage) => message.headers?.[HEADERS.replayed]?.toString() === '1';
const outboxOf = (db: Db) => db.collection<{ _id: string }>(COLLECTIONS.outbox);

describe('the outbox of slot markers', () => {
  it("publishes a crashed process's appended events from another process, marked replayed, once; then takes its marker out", async () => {
    const w = await world();
    // Appended by a process that died before publishing them: markers and events stored, nothing handed over.
    const crashed = new EventStore(w.db);
    const appended = [
      ...(await commitRecord(crashed, w.tenantId, 'a')),
      ...(await commitRecord(crashed, w.tenantId, 'b')),
    ];
    const markers = await outboxOf(w.db).find({}).toArray();
    expect(markers.map((doc) => doc._id.startsWith(`${crashed.outbox.instanceId}:`))).not.toContain(false);
    expect(markers.length).toBeGreaterThan(0);

    const relay = relayOn(w.db, new EventStore(w.db), w.topic, { appendBoundMs: 6_000 });
    relay.start();
    await waitFor(() => appended.every((event) => w.seen.some((message) => idOf(message) === event.id)), {
      timeoutMs: 30_000,
      what: "the crashed process's events on the topic",
    });
    expect(w.seen.every(replayed)).toBe(true);
    // Read again by later sweeps until no append of the slot can land any more, then taken out.
    await waitFor(async () => (await outboxOf(w.db).countDocuments({})) === 0, {
      timeoutMs: 30_000,
      what: "the crashed process's markers out of the outbox",
    });
    expect(w.seen.map(idOf).sort()).toEqual(appended.map((event) => event.id).sort());
  });

  it('takes out the marker of a process that stopped between the marker and its append, publishing nothing', async () => {
    const w = await world();
    const crashed = new EventStore(w.db);
    // The marker is durable; the process died before its append went out.
    const slot = await crashed.outbox.openAppend();
    expect(await outboxOf(w.db).countDocuments({ _id: slot })).toBe(1);

    const relay = relayOn(w.db, new EventStore(w.db), w.topic, { appendBoundMs: 4_000 });
    relay.start();
    await waitFor(async () => (await outboxOf(w.db).countDocuments({})) === 0, {
      timeoutMs: 30_000,
      what: 'the marker out of the outbox',
    });
    expect(Number((await admin.fetchTopicOffsets(w.topic))[0]?.high)).toBe(0);
  });

  it('fails an append whose marker insert lost its reply, goes ahead with the next, and takes every marker out', async () => {
    const w = await world();
    const storeRelay = await startStoreRelay({ mongoUrl: servers.mongoUrl, delayMs: 1, dropCommands: ['insert'] });
    const client = new MongoClient(storeRelay.url, { serverSelectionTimeoutMS: 5000, retryWrites: false });
    cleanups.push(
      () => storeRelay.close(),
      () => client.close(),
    );
    const store = new EventStore(client.db(w.db.databaseName));
    const logged: string[] = [];
    const relay = relayOn(w.db, store, w.topic, { appendBoundMs: 60_000, pollMs: 60_000, logged });
    relay.start();

    storeRelay.setFault('drop');
    await expect(commitRecord(store, w.tenantId, 'lost')).rejects.toThrow();
    storeRelay.setFault(undefined);
    expect(storeRelay.counts().dropped).toEqual({ insert: 1 });
    // The marker is in the store, its writer never heard so, and no event went in after it.
    const lost = await outboxOf(w.db).find({}).toArray();
    expect(lost).toHaveLength(1);
    expect(await w.db.collection<EventDoc>(COLLECTIONS.events).countDocuments({})).toBe(0);

    // The next append inserts its slot's marker (or finds it there) and goes ahead.
    let events: Awaited<ReturnType<typeof commitRecord>> = [];
    await waitFor(
      async () => {
        events = await commitRecord(store, w.tenantId, 'lost').catch(() => []);
        return events.length > 0;
      },
      { timeoutMs: 30_000, what: 'an append through the store relay' },
    );
    relay.appended(events);
    await waitFor(() => w.seen.length >= events.length, { timeoutMs: 30_000, what: 'the events on the topic' });
    expect(w.seen.map(idOf)).toEqual(events.map((event) => event.id));
    expect(w.seen.filter(replayed)).toEqual([]);
    // Every marker is taken out by its own process once its second is over, the one whose reply was lost too.
    await waitFor(async () => (await outboxOf(w.db).countDocuments({})) === 0, {
      timeoutMs: 30_000,
      what: 'every marker out of the outbox',
    }).catch(async (err: unknown) => {
      const left = (await outboxOf(w.db).find({}).toArray()).map((doc) => doc._id);
      process.stderr.write(`markers left: ${JSON.stringify(left)}\nrelay log:\n${logged.slice(-200).join('')}`);
      throw err;
    });
  });

  it('publishes the outbox copies the previous release left, marked replayed, and takes them out', async () => {
    const w = await world();
    const recordId = recordIdFor(w.tenantId, 'old');
    const [event] = stageRecord(
      new EventStore(w.db).streams.assumedNewRecord(recordId),
      {
        type: 'UpsertRecord',
        recordId,
        input: { clientId: 'old', name: 'n', entity: 'post', content: content('fine') },
        passthrough: false,
      },
      { tenantId: w.tenantId, correlationId: 'c' },
    ).events;
    // As the previous release stored it a minute ago: the event without a slot, its copy in a slot of the copies.
    const at = Date.now() - 60_000;
    const id = ulid(at);
    const doc: EventDoc = { ...event!, id, _id: id };
    await w.db.collection<EventDoc>(COLLECTIONS.events).insertOne(doc);
    await w.db
      .collection<EventDoc>(COLLECTIONS.outbox)
      .insertOne({ ...doc, slot: `${ulid(at)}:${Math.floor(at / 1000)}` });

    const relay = relayOn(w.db, new EventStore(w.db), w.topic, { appendBoundMs: 60_000 });
    relay.start();
    await waitFor(() => w.seen.length >= 1, { timeoutMs: 30_000, what: 'the copied event on the topic' });
    expect(w.seen.map(idOf)).toEqual([id]);
    expect(w.seen.every(replayed)).toBe(true);
    await waitFor(async () => (await outboxOf(w.db).countDocuments({})) === 0, {
      timeoutMs: 30_000,
      what: 'the copy out of the outbox',
    });
  });
});
