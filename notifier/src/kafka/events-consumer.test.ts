import { DomainEvent, HEADERS, topicNames, type WebhookCommand } from '@vigil/proto';
import type { KafkaMessage } from 'kafkajs';
import pino from 'pino';
import { fakeKafka } from '../../../deploy/test-support/fake-kafka-consumer';
import type { DeadLetterStore, EventDeadLetter } from '../store/dead-letter-store';
import { EventsConsumer, type WriteBehind } from './events-consumer';
import { isFirstRead } from './first-read';
import { recordModerated } from '../../../deploy/test-support/events';
import { waitFor } from '../../../deploy/test-support';

const topics = topicNames('t.');

/**
 * A consumer of `topic` whose handlers are in memory: the fan-out (every event type) records the events it is handed
 * (failing with `failures` first), the moderations reaction those of its one type, the statuses reaction (a type the
 * batches here never hold) would record its own, and the command handler the commands.
 */
function setup(options: { topic?: string; failures?: Error[]; writeBehind?: WriteBehind } = {}) {
  const { kafka, deliver, join, committed, calls } = fakeKafka(options.topic ?? topics.events);
  const failures = [...(options.failures ?? [])];
  const fannedOut: DomainEvent[][] = [];
  const commands: WebhookCommand[] = [];
  const setAside: EventDeadLetter[] = [];
  const deadLetters = {
    setAside: (letter: EventDeadLetter) => {
      setAside.push(letter);
      return Promise.resolve();
    },
  } as unknown as DeadLetterStore;
  const reactions: DomainEvent[][] = [];
  const statuses: DomainEvent[][] = [];
  const consumer = new EventsConsumer({
    kafka,
    groupId: 'notifier',
    timing: { sessionTimeoutMs: 600_000, heartbeatIntervalMs: 60_000, rebalanceTimeoutMs: 600_000 },
    topics,
    reactions: [
      {
        name: 'fan-out',
        applicableEvents: DomainEvent.options.map((schema) => schema.shape.type.value),
        react: (events) => {
          const failure = failures.shift();
          if (failure) return Promise.reject(failure);
          fannedOut.push(events);
          return Promise.resolve();
        },
      },
      {
        name: 'moderations',
        applicableEvents: ['RecordModerated'],
        react: (events) => {
          reactions.push(events);
          return Promise.resolve();
        },
      },
      {
        name: 'statuses',
        applicableEvents: ['UserStatusChanged'],
        react: (events) => {
          statuses.push(events);
          return Promise.resolve();
        },
      },
    ],
    commands: {
      apply: (command) => {
        commands.push(command);
        return Promise.resolve();
      },
    },
    deadLetters,
    log: pino({ level: 'silent' }),
    retryInitialMs: 1,
    retryMaxMs: 2,
    commitIntervalMs: 0,
    writeBehind: options.writeBehind,
  });
  const ids = () => fannedOut.map((events) => events.map((event) => event.id));
  const firstRead = () =>
    fannedOut
      .flat()
      .filter(isFirstRead)
      .map((event) => event.id);
  return { consumer, deliver, join, committed, calls, ids, firstRead, commands, setAside, reactions, statuses };
}

/** `rec_1` of tenant `ten_1` moderated Flagged with a reason and a user, as event `id`. */
const moderated = (id: string, data: Record<string, unknown> = {}, envelope: Record<string, unknown> = {}) =>
  recordModerated(
    { moderationId: `mod_${id}`, reasons: ['r'], rules: ['x'], userId: 'usr_1', ...data },
    { id, tenantId: 'ten_1', version: 3, ...envelope },
  );

function message(value: unknown, offset: string, headers: KafkaMessage['headers'] = {}): KafkaMessage {
  return {
    key: Buffer.from('rec_1'),
    value: Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)),
    offset,
    headers,
    timestamp: '0',
    attributes: 0,
  };
}

describe('EventsConsumer', () => {
  it('hands a batch’s events to the fan-out in one call, then commits after the last', async () => {
    const t = setup();
    await t.consumer.start();
    await t.deliver([message(moderated('evt_1'), '10'), message(moderated('evt_2'), '11')]);
    expect(t.ids()).toEqual([['evt_1', 'evt_2']]);
    expect(t.committed).toEqual([{ topic: topics.events, partition: 0, offset: '12' }]);
  });

  it('sets aside a message that is not a known event, and hands on the others of its batch', async () => {
    const t = setup();
    await t.consumer.start();
    await t.deliver([message('{"not": "an event"}', '4'), message(moderated('evt_2'), '5')]);
    expect(t.setAside).toEqual([
      expect.objectContaining({ reason: 'invalid_event', offset: '4', topic: topics.events }),
    ]);
    expect(t.ids()).toEqual([['evt_2']]);
    expect(t.committed).toEqual([{ topic: topics.events, partition: 0, offset: '6' }]);
  });

  it('hands each reaction the batch’s valid events of the types it declares before committing, and skips the others', async () => {
    const t = setup();
    await t.consumer.start();
    await t.deliver([message(moderated('evt_1'), '1'), message('not json', '2')]);
    expect(t.reactions.map((events) => events.map((event) => event.id))).toEqual([['evt_1']]);
    expect(t.statuses).toEqual([]);
    expect(t.committed).toHaveLength(1);
  });

  it('retries the whole batch while the fan-out fails, and commits only once it held', async () => {
    const t = setup({ failures: [new Error('store down'), new Error('store down')] });
    await t.consumer.start();
    await t.deliver([message(moderated('evt_1'), '7')]);
    expect(t.ids()).toEqual([['evt_1']]);
    expect(t.committed).toEqual([{ topic: topics.events, partition: 0, offset: '8' }]);
  });

  it('hands a webhook command to its handler, and sets aside one that is not a command', async () => {
    const t = setup({ topic: topics.webhookCommands });
    await t.consumer.start();
    const retryDelivery = {
      id: 'cmd_1',
      type: 'RetryDelivery',
      tenantId: 'ten_1',
      issuedAt: '2026-01-02T03:04:05.678Z',
      deliveryId: 'dlv_1',
    };
    await t.deliver([message(retryDelivery, '1'), message({ type: 'Nonsense' }, '2')]);
    expect(t.commands).toEqual([expect.objectContaining({ id: 'cmd_1', type: 'RetryDelivery' })]);
    expect(t.setAside).toEqual([expect.objectContaining({ reason: 'invalid_command', offset: '2' })]);
    expect(t.committed).toEqual([{ topic: topics.webhookCommands, partition: 0, offset: '3' }]);
  });
  it('marks read for the first time only the events past what the partition held when this member joined', async () => {
    const t = setup();
    await t.consumer.start();
    t.join();
    // The first batch after the join: the partition held offsets up to 11, which another member may have handled.
    await t.deliver([message(moderated('evt_10'), '10'), message(moderated('evt_11'), '11')], '12');
    await t.deliver([message(moderated('evt_12'), '12'), message(moderated('evt_13'), '13')], '20');
    expect(t.firstRead()).toEqual(['evt_12', 'evt_13']);
    // After a rebalance, the partition's offsets up to the next batch's high watermark may have been handled again.
    t.join();
    await t.deliver([message(moderated('evt_14'), '14')], '30');
    await t.deliver([message(moderated('evt_30'), '30')], '31');
    expect(t.firstRead()).toEqual(['evt_12', 'evt_13', 'evt_30']);
  });

  it('does not mark read for the first time an event the moderator published again', async () => {
    const t = setup();
    await t.consumer.start();
    await t.deliver([message(moderated('evt_4'), '4')], '5');
    await t.deliver([
      message(moderated('evt_5'), '5'),
      message(moderated('evt_6'), '6', { [HEADERS.replayed]: Buffer.from('1') }),
    ]);
    expect(t.firstRead()).toEqual(['evt_5']);
  });
  it('marks no event read for the first time when its batch is handled again', async () => {
    const t = setup({ failures: [new Error('store down')] });
    await t.consumer.start();
    // Past what the partition held (its high watermark was 5): a first read, but its first try fails, after its
    // webhooks may have been sent and stored. The second try is not a first read.
    await t.deliver([message(moderated('evt_5'), '5')], '5');
    expect(t.ids()).toEqual([['evt_5']]);
    expect(t.firstRead()).toEqual([]);
  });

  it('returns from a batch before the writes its reactions handed over, and commits it once they are done', async () => {
    const calls: string[] = [];
    let write!: () => void;
    const writeBehind: WriteBehind = {
      settled: () => new Promise<void>((resolve) => (write = resolve)),
      close: () => {
        calls.push('close writer');
        return Promise.resolve();
      },
    };
    const t = setup({ writeBehind });
    await t.consumer.start();
    await t.deliver([message(moderated('evt_1'), '10')]);
    expect(t.ids()).toEqual([['evt_1']]);
    expect(t.committed).toEqual([]);
    write();
    await waitFor(() => t.committed.length > 0, { timeoutMs: 5_000, intervalMs: 2, what: 'the commit' });
    expect(t.committed).toEqual([{ topic: topics.events, partition: 0, offset: '11' }]);
    await t.consumer.stop();
    expect(calls).toEqual(['close writer']);
  });

  it('on stop closes the writer and commits what waited for it before leaving the group', async () => {
    let write!: () => void;
    const written = new Promise<void>((resolve) => (write = resolve));
    const writeBehind: WriteBehind = {
      settled: () => written,
      close: () => {
        write();
        return written;
      },
    };
    const t = setup({ writeBehind });
    await t.consumer.start();
    await t.deliver([message(moderated('evt_1'), '10')]);
    expect(t.committed).toEqual([]);
    await t.consumer.stop();
    expect(t.committed).toEqual([{ topic: topics.events, partition: 0, offset: '11' }]);
    expect(t.calls.slice(-2)).toEqual(['commit', 'disconnect']);
  });
});
