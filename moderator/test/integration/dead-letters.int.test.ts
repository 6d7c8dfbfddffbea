import { COLLECTIONS, HEADERS, recordIdFor } from '@vigil/proto';
import { recordStream } from '../../src/domain/stream-names';
import type { Admin, KafkaMessage } from 'kafkajs';
import { waitFor } from '../../../deploy/test-support';
import { deadLettersCommand } from '../../src/admin/dead-letters-command';
import type { OutboxDeadLetterDoc } from '../../src/store/dead-letter-store';
import type { EventDoc } from '../../src/store/event-store';
import { content, ingestCommand, startHarness, type Harness } from './harness';
import { moderate as moderateRecord } from '../../src/service/moderate';

// The events topic refuses messages over this size, so one record with a longer text makes an event the broker
// refuses (as the default 1 MB limit refuses a 1 MB text), while a moderation event (under 1 KB) passes.
const TOPIC_MAX_BYTES = 4096;
const MARKER = 'oversizedcontentmarker';

let h: Harness;
let admin: Admin;

beforeAll(async () => {
  h = await startHarness();
  admin = h.kafka.admin();
  await admin.connect();
  await setTopicMaxBytes(TOPIC_MAX_BYTES);
});
afterAll(async () => {
  await admin.disconnect();
  await h.close();
});

async function setTopicMaxBytes(bytes: number, topic = h.topics.events): Promise<void> {
  await admin.alterConfigs({
    validateOnly: false,
    resources: [
      { type: 2 /* TOPIC */, name: topic, configEntries: [{ name: 'max.message.bytes', value: `${bytes}` }] },
    ],
  });
  // The broker applies a topic's new configuration after it answered the change: until it reports the value, a
  // message over the new bound can still be accepted.
  await waitFor(
    async () => {
      const { resources } = await admin.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: 2 /* TOPIC */, name: topic, configNames: ['max.message.bytes'] }],
      });
      return resources[0]?.configEntries.find((entry) => entry.configName === 'max.message.bytes')?.configValue ===
        `${bytes}`
        ? true
        : undefined;
    },
    { what: `max.message.bytes ${bytes} in effect on ${topic}` },
  );
}

const moderate = (tenantId: string, clientId: string, text: string) =>
  moderateRecord(h.moderator.useCases, {
    tenantId,
    correlationId: 'c',
    clientId,
    name: 'n',
    entity: 'post',
    content: content(text),
    passthrough: false,
  });

async function deadLetterCount(reason: string, name = 'moderator_outbox_dead_letters_total'): Promise<number> {
  const metric = await h.registry.getSingleMetric(name)?.get();
  return metric?.values.find((value) => value.labels.reason === reason)?.value ?? 0;
}

const eventIdsOf = (messages: KafkaMessage[]) => new Set(messages.map((m) => m.headers?.[HEADERS.eventId]?.toString()));

describe('outbox relay with an event the broker refuses', () => {
  it('sets the event aside with its reason, counts it, and keeps publishing other streams and its own later events', async () => {
    const published = await h.collect(h.topics.events);
    const bad = await h.newTenant();
    const others = await Promise.all([1, 2, 3].map(() => h.newTenant()));

    // The refused event shares a batch with good ones: the relay is paused while they are stored.
    await h.moderator.relay.stop();
    const good1 = await moderate(others[0]!, 'before', 'fine');
    const oversized = await moderate(bad, 'big', `${MARKER} ${'x'.repeat(TOPIC_MAX_BYTES * 2)}`);
    const good2 = await Promise.all(others.map((tenantId) => moderate(tenantId, 'after', 'fine')));
    h.moderator.relay.start();
    // After the relay met the refused event: newer events of the same stream, and of others.
    await waitFor(async () => (await deadLetterCount('message_too_large')) >= 1, { what: 'dead letter counted' });
    const again = await moderate(bad, 'big', 'short now');
    const good3 = await moderate(others[1]!, 'later', 'fine');

    const events = h.db.collection<EventDoc>(COLLECTIONS.events);
    const bigStream = recordStream(oversized.recordId);
    const stored = await events.find({ stream: bigStream }).sort({ version: 1 }).toArray();
    const refused = stored.find((event) => event.type === 'RecordUpserted' && event.version === 1)!;
    expect(Buffer.byteLength(JSON.stringify(refused))).toBeGreaterThan(TOPIC_MAX_BYTES);

    const wanted = await events
      .find({
        $or: [
          { stream: bigStream },
          ...[good1, ...good2, good3].map((result) => ({ stream: recordStream(result.recordId) })),
        ],
      })
      .toArray();
    const wantedIds = wanted.map((event) => event._id).filter((id) => id !== refused._id);
    expect(wantedIds.length).toBeGreaterThanOrEqual(2 * 5 + 3);
    await waitFor(
      () => {
        const seen = eventIdsOf(published);
        return wantedIds.every((id) => seen.has(id));
      },
      { timeoutMs: 30000, what: 'every other event published' },
    );
    expect(again.recordId).toBe(oversized.recordId);
    expect(eventIdsOf(published).has(refused._id)).toBe(false);

    // Per stream, events are first published in version order. Publishing is at least once: a send that failed after
    // the broker took it (a timeout under load) is sent again, and consumers dedupe by event id, so a repeat of an event
    // already published may follow; what counts is the order in which each event first appears.
    const firstSeen = new Map<string, number>();
    for (const message of published.filter((m) => m.key?.toString() === bigStream)) {
      const id = message.headers?.[HEADERS.eventId]?.toString() ?? '';
      const { version } = JSON.parse(message.value?.toString() ?? '{}') as { version: number };
      if (!firstSeen.has(id)) firstSeen.set(id, version);
    }
    const versions = [...firstSeen.values()];
    expect(versions.length).toBeGreaterThanOrEqual(3);
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
    expect(versions).not.toContain(1);

    const dead = await h.db
      .collection<OutboxDeadLetterDoc>(COLLECTIONS.outboxDeadLetters)
      .findOne({ _id: refused._id });
    expect(dead).toMatchObject({
      tenantId: bad,
      stream: bigStream,
      version: 1,
      eventType: 'RecordUpserted',
      reason: 'message_too_large',
      error: 'MESSAGE_TOO_LARGE',
      state: 'open',
      count: 1,
    });
    expect(JSON.stringify(dead)).not.toContain(MARKER);
    expect(await deadLetterCount('message_too_large')).toBe(1);
    const outbox = h.db.collection<EventDoc>(COLLECTIONS.outbox);
    // The relay takes the markers of the events' slots out after the broker took them (or they were set aside): the
    // last removal may follow the last publish.
    const slots = (await events.distinct('slot', { tenantId: { $in: [bad, ...others] } })).filter(
      (slot): slot is string => typeof slot === 'string',
    );
    expect(slots.length).toBeGreaterThan(0);
    await waitFor(async () => (await outbox.countDocuments({ _id: { $in: slots } })) === 0, {
      timeoutMs: 30000,
      what: 'the outbox emptied of the slots of published and set-aside events',
    });
    expect((await events.findOne({ _id: refused._id }))?.deadLetteredAt).toBeInstanceOf(Date);
    expect(h.logText()).toContain('outbox event refused by the broker, set aside');
    expect(h.logText()).not.toContain(MARKER);

    // The operator lists it, raises the topic's limit and replays it: it is published, and the dead letter closed.
    const listed = (await deadLettersCommand(h.moderator.deadLetters, ['list'])) as Array<{ eventId: string }>;
    expect(listed.map((item) => item.eventId)).toContain(refused._id);
    await setTopicMaxBytes(1024 * 1024);
    await expect(deadLettersCommand(h.moderator.deadLetters, ['replay', refused._id])).resolves.toMatchObject({
      replayed: true,
    });
    h.moderator.relay.wake();
    await waitFor(() => eventIdsOf(published).has(refused._id), { timeoutMs: 30000, what: 'replayed event' });
    await waitFor(async () => (await outbox.countDocuments({ _id: refused._id })) === 0, {
      what: 'replayed event out of the outbox',
    });
    expect((await events.findOne({ _id: refused._id }))?.deadLetteredAt).toBeUndefined();
    const after = (await deadLettersCommand(h.moderator.deadLetters, ['list', '--all'])) as Array<{
      eventId: string;
      state: string;
    }>;
    expect(after.find((item) => item.eventId === refused._id)?.state).toBe('replayed');
    expect(await deadLettersCommand(h.moderator.deadLetters, ['list'])).toEqual([]);
    expect((await events.findOne({ _id: refused._id }))?.deadLetteredAt).toBeUndefined();
  });
});

describe('ingest consumer with a command the dead-letter topic refuses', () => {
  it('dead-letters its coordinates instead, counts it by reason, and applies the next command', async () => {
    await setTopicMaxBytes(2048, h.topics.ingestDeadLetter);
    const dead = await h.collect(h.topics.ingestDeadLetter);
    const tenantId = await h.newTenant();
    const command = (clientId: string, text: string) => ingestCommand(tenantId, clientId, text);
    // Over the clientId bound (invalid), and too large for the dead-letter topic.
    const poison = command('c'.repeat(300), `${MARKER} ${'x'.repeat(4096)}`);
    const producer = h.kafka.producer();
    await producer.connect();
    try {
      await producer.send({
        topic: h.topics.ingest,
        acks: -1,
        messages: [poison, command('after', 'fine')].map((value) => ({ key: 'same', value: JSON.stringify(value) })),
      });
    } finally {
      await producer.disconnect();
    }
    await waitFor(
      () => h.db.collection(COLLECTIONS.records).findOne({ _id: recordIdFor(tenantId, 'after') } as never),
      { what: 'the command after the poison applied' },
    );
    const letter = await waitFor(() => dead[0], { what: 'dead letter' });
    expect(letter.value).toBeNull();
    expect(letter.headers?.[HEADERS.deadLetterReason]?.toString()).toBe('invalid_command: data.clientId');
    expect(letter.headers?.[HEADERS.deadLetterSource]?.toString()).toMatch(
      new RegExp(`^${h.topics.ingest.replace(/\./g, '\\.')}/\\d+/\\d+$`),
    );
    expect(await deadLetterCount('invalid_command', 'moderator_ingest_dead_letters_total')).toBe(1);
    expect(h.logText()).not.toContain(MARKER);
  });
});
