import { COLLECTIONS, HEADERS, type DomainEvent } from '@vigil/proto';
import type { Producer } from 'kafkajs';
import { waitFor } from '../../../deploy/test-support';
import type { EventDeadLetterDoc } from '../../src/store/dead-letter-store';
import { connectedProducer, createReceiver, createWorld, recordModerated, type Receiver, type World } from './harness';

let world: World;
let hook: Receiver;
let producer: Producer;

beforeAll(async () => {
  world = await createWorld();
  await world.start();
  hook = await createReceiver();
  producer = await connectedProducer('notifier-dl-test');
});

afterAll(async () => {
  await producer.disconnect();
  await hook.close();
  await world.close();
});

/** Every message under one key: one partition, so they arrive in one batch, in this order. */
async function publishRaw(...values: Array<DomainEvent | string>): Promise<void> {
  await producer.send({
    topic: world.topics.events,
    acks: -1,
    messages: values.map((value) => ({
      key: 'one-partition',
      value: typeof value === 'string' ? value : JSON.stringify(value),
      headers: typeof value === 'string' ? {} : { [HEADERS.eventId]: value.id, [HEADERS.eventType]: value.type },
    })),
  });
}

async function counted(): Promise<Record<string, number>> {
  const metric = await world.registry.getSingleMetric('notifier_events_dead_letters_total')?.get();
  return Object.fromEntries(metric?.values.map((value) => [value.labels.reason, value.value]) ?? []);
}

describe('events consumer with events it cannot process', () => {
  it("sets aside a malformed event and one tenant's failing event, and delivers the other tenant's webhook", async () => {
    const broken = world.tenant();
    // A corrupt endpoint document: fanning out this tenant's events throws, every time.
    await broken.endpoint(hook.url, { events: null as never });
    const brokenEvent = recordModerated(broken, await broken.record('post-1'));
    const healthy = world.tenant();
    await healthy.endpoint(hook.url);
    const healthyEvent = recordModerated(healthy, await healthy.record('post-1'));

    await publishRaw('{"not an event', brokenEvent, healthyEvent);

    await waitFor(() => hook.received.length >= 1, { timeoutMs: 45000, what: "the healthy tenant's webhook" });
    expect(JSON.parse(hook.received[0]!.body)).toMatchObject({ event: 'record.flagged' });
    const letters = await waitFor(
      async () => {
        const docs = await world.db.collection<EventDeadLetterDoc>(COLLECTIONS.eventDeadLetters).find().toArray();
        return docs.length >= 2 ? docs : undefined;
      },
      { what: 'dead letters' },
    );
    expect(letters.find((doc) => doc.reason === 'invalid_event')).toMatchObject({ topic: world.topics.events });
    expect(letters.find((doc) => doc.reason === 'processing_failed')).toMatchObject({
      _id: brokenEvent.id,
      tenantId: broken.tenantId,
      eventType: 'RecordModerated',
      error: 'TypeError',
    });
    expect(await counted()).toEqual({ invalid_event: 1, processing_failed: 1 });
    expect(await world.deliveries({ tenantId: broken.tenantId })).toEqual([]);
  });
});
