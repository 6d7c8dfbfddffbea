import { TenantVersions, topicNames, type DomainEvent, type WebhookEndpointDoc } from '@vigil/proto';
import type { KafkaMessage } from 'kafkajs';
import pino from 'pino';
import { fakeKafka } from '../../../deploy/test-support/fake-kafka-consumer';
import type { EndpointCache } from '../delivery/endpoint-cache';
import { deliveryIdOf, webhookIdOf } from '../domain/webhook-events';
import type { DeadLetterStore, EventDeadLetter } from '../store/dead-letter-store';
import type { DeliveryDoc, DeliveryStore } from '../store/delivery-store';
import type { EndpointStateStore } from '../store/endpoint-states';
import type { UpstreamReads } from '../store/upstream-reads';
import { EventsConsumer } from './events-consumer';

const topics = topicNames('t.');

const endpoint = (id: string, events: string[], tenantId = 'ten_1'): WebhookEndpointDoc =>
  ({
    _id: id,
    tenantId,
    url: `https://example.com/${id}`,
    events,
    enabled: true,
    secrets: [],
  }) as unknown as WebhookEndpointDoc;

function setup(endpoints: WebhookEndpointDoc[]) {
  const { kafka, deliver, committed } = fakeKafka(topics.events);
  const inserted: DeliveryDoc[][] = [];
  // The projections are not there yet: bodies are left to the scheduler (no body read here).
  const store = {
    insertNew: (docs: DeliveryDoc[]) => {
      inserted.push(docs);
      return Promise.resolve({ inserted: new Set(docs.map((doc) => doc._id)), adopted: new Set<string>() });
    },
  } as unknown as DeliveryStore;
  const reads = {
    record: () => Promise.resolve(null),
    user: () => Promise.resolve(null),
  } as unknown as UpstreamReads;
  const endpointReads: string[] = [];
  const cache = {
    active: (tenantId: string) => {
      endpointReads.push(tenantId);
      return Promise.resolve(endpoints.filter((e) => e.tenantId === tenantId));
    },
  } as unknown as EndpointCache;
  const setAside: EventDeadLetter[] = [];
  const deadLetters = {
    setAside: (letter: EventDeadLetter) => {
      setAside.push(letter);
      return Promise.resolve();
    },
  } as unknown as DeadLetterStore;
  const reactions: DomainEvent[][] = [];
  let woken = 0;
  const consumer = new EventsConsumer({
    kafka,
    groupId: 'notifier',
    timing: { sessionTimeoutMs: 600_000, heartbeatIntervalMs: 60_000, rebalanceTimeoutMs: 600_000 },
    topics,
    store,
    endpointStates: {} as EndpointStateStore,
    reads,
    endpoints: cache,
    versions: new TenantVersions(),
    deadLetters,
    log: pino({ level: 'silent' }),
    onWork: () => {
      woken += 1;
    },
    onEvents: (events) => {
      reactions.push(events);
      return Promise.resolve();
    },
    retryInitialMs: 1,
    retryMaxMs: 2,
  });
  const deliveries = () => inserted.flat();
  return { consumer, deliver, committed, deliveries, endpointReads, setAside, reactions, woken: () => woken };
}

function moderated(id: string, data: Record<string, unknown> = {}, envelope: Record<string, unknown> = {}) {
  return {
    id,
    tenantId: 'ten_1',
    stream: 'record-rec_1',
    version: 3,
    occurredAt: '2026-01-02T03:04:05.678Z',
    correlationId: 'cor_1',
    type: 'RecordModerated',
    data: {
      recordId: 'rec_1',
      moderationId: `mod_${id}`,
      status: 'Flagged',
      previousStatus: 'Compliant',
      via: 'AI',
      reasons: ['r'],
      rules: ['x'],
      testMode: false,
      userId: 'usr_1',
      ...data,
    },
    ...envelope,
  };
}

function message(value: unknown, offset: string): KafkaMessage {
  return {
    key: Buffer.from('rec_1'),
    value: Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)),
    offset,
    headers: {},
    timestamp: '0',
    attributes: 0,
  };
}

describe('EventsConsumer fan-out', () => {
  it('creates one delivery per endpoint subscribed to the event, all with the event’s one webhook-id', async () => {
    const t = setup([
      endpoint('we_flagged', ['record.flagged']),
      endpoint('we_all', []),
      endpoint('we_users', ['user.suspended']),
      endpoint('we_other_tenant', [], 'ten_2'),
    ]);
    await t.consumer.start();
    await t.deliver([message(moderated('evt_1'), '10')]);
    const docs = t.deliveries();
    expect(docs.map((doc) => doc._id).sort()).toEqual(
      [deliveryIdOf('evt_1', 'we_all'), deliveryIdOf('evt_1', 'we_flagged')].sort(),
    );
    for (const doc of docs) {
      expect(doc).toMatchObject({
        tenantId: 'ten_1',
        webhookId: webhookIdOf('evt_1'),
        eventId: 'evt_1',
        event: 'record.flagged',
        subjectId: 'mod_evt_1',
        state: 'pending',
      });
    }
    expect(t.woken()).toBe(1);
    expect(t.committed).toEqual([{ topic: topics.events, partition: 0, offset: '11' }]);
  });

  it('sends nothing for an event that changed no status, or one in test mode, and still commits', async () => {
    const t = setup([endpoint('we_all', [])]);
    await t.consumer.start();
    await t.deliver([
      message(moderated('evt_same', { previousStatus: 'Flagged' }), '1'),
      message(moderated('evt_test', { testMode: true }), '2'),
    ]);
    expect(t.deliveries()).toHaveLength(0);
    expect(t.woken()).toBe(0);
    expect(t.committed).toEqual([{ topic: topics.events, partition: 0, offset: '3' }]);
  });

  it('makes one delivery of an event published twice in a batch', async () => {
    const t = setup([endpoint('we_all', [])]);
    await t.consumer.start();
    await t.deliver([message(moderated('evt_1'), '1'), message(moderated('evt_1'), '2')]);
    expect(t.deliveries()).toHaveLength(1);
  });

  it('sets aside a message that is not a known event, and fans out the others of its batch', async () => {
    const t = setup([endpoint('we_all', [])]);
    await t.consumer.start();
    await t.deliver([message('{"not": "an event"}', '4'), message(moderated('evt_2'), '5')]);
    expect(t.setAside).toEqual([
      expect.objectContaining({ reason: 'invalid_event', offset: '4', topic: topics.events }),
    ]);
    expect(t.deliveries().map((doc) => doc.eventId)).toEqual(['evt_2']);
    expect(t.committed).toEqual([{ topic: topics.events, partition: 0, offset: '6' }]);
  });

  it('reads the tenant’s endpoints again when an event carries a newer configuration version', async () => {
    const t = setup([endpoint('we_all', [])]);
    await t.consumer.start();
    await t.deliver([
      message(moderated('evt_1', {}, { configVersion: 1 }), '1'),
      message(moderated('evt_2', {}, { configVersion: 1 }), '2'),
      message(moderated('evt_3', {}, { configVersion: 2 }), '3'),
    ]);
    expect(t.endpointReads).toEqual(['ten_1', 'ten_1']);
    expect(t.deliveries()).toHaveLength(3);
  });

  it('hands the batch’s valid events to the other reactions (emails, payments) before committing', async () => {
    const t = setup([]);
    await t.consumer.start();
    await t.deliver([message(moderated('evt_1'), '1'), message('not json', '2')]);
    expect(t.reactions.map((events) => events.map((event) => event.id))).toEqual([['evt_1']]);
    expect(t.committed).toHaveLength(1);
  });
});
