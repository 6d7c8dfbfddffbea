import type { EachBatchPayload, KafkaMessage } from 'kafkajs';
import pino from 'pino';
import { fakeKafka } from '../../../deploy/test-support/fake-kafka-consumer';
import type { ConsumerMetrics } from './consumer-metrics';
import { GroupConsumer, type GroupConsumerHandler } from './group-consumer';

const timing = { sessionTimeoutMs: 6000, heartbeatIntervalMs: 1000, rebalanceTimeoutMs: 10000 };
const log = pino({ level: 'silent' });

function message(offset: string): KafkaMessage {
  return { key: null, value: Buffer.from('{}'), offset, headers: {}, timestamp: '0', attributes: 0 };
}

function setup(handler: GroupConsumerHandler, extra: { fetch?: { minBytes: number } } = {}) {
  const fake = fakeKafka('t.events');
  const attached: unknown[] = [];
  const metrics = { attach: (consumer: unknown) => attached.push(consumer) } as unknown as ConsumerMetrics;
  const consumer = new GroupConsumer({
    kafka: fake.kafka,
    groupId: 'group',
    timing,
    metrics,
    topics: ['t.events', 't.commands'],
    concurrency: 3,
    log,
    handler,
    ...extra,
  });
  return { ...fake, consumer, attached };
}

describe('GroupConsumer', () => {
  it('joins with the timing, no topic creation and its metrics attached, and reads its topics from the start', async () => {
    const { consumer, made, calls, attached } = setup(
      { eachBatch: () => Promise.resolve() },
      { fetch: { minBytes: 7 } },
    );
    expect(attached).toHaveLength(1);
    await consumer.start();
    expect(made.config).toEqual({
      groupId: 'group',
      allowAutoTopicCreation: false,
      sessionTimeout: 6000,
      heartbeatInterval: 1000,
      rebalanceTimeout: 10000,
      maxWaitTimeInMs: 1000,
      minBytes: 7,
    });
    expect(made.subscribed).toEqual({ topics: ['t.events', 't.commands'], fromBeginning: true });
    expect(made.run).toMatchObject({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: 3,
    });
    expect(calls).toEqual(['connect', 'subscribe', 'run']);
  });

  it('commits a batch the handler marks handled, after its last message, and resolves that offset', async () => {
    const resolved: string[] = [];
    const { consumer, committed, made } = setup({
      eachBatch: (payload) => consumer.handled(payload),
    });
    await consumer.start();
    await made.run!.eachBatch!({
      batch: { topic: 't.events', partition: 2, messages: [message('4'), message('5')] },
      heartbeat: () => Promise.resolve(),
      resolveOffset: (offset: string) => resolved.push(offset),
      isRunning: () => true,
      isStale: () => false,
    } as unknown as EachBatchPayload);
    expect(committed).toEqual([{ topic: 't.events', partition: 2, offset: '6' }]);
    expect(resolved).toEqual(['5']);
  });

  it('gathers commits within the interval and commits them when it stops, before leaving the group', async () => {
    const { consumer, deliver, committed, calls } = setup({
      commitIntervalMs: 60_000,
      eachBatch: (payload) => consumer.handled(payload),
    });
    await consumer.start();
    await deliver([message('0')]);
    await deliver([message('1')]);
    expect(committed).toEqual([]);
    await consumer.stop();
    expect(committed).toEqual([{ topic: 't.events', partition: 0, offset: '2' }]);
    expect(calls.slice(-2)).toEqual(['commit', 'disconnect']);
    expect(consumer.stopping).toBe(true);
  });

  it('tells a handler the batch is moving when the partition is stale, the consumer stopped or a heartbeat failed', async () => {
    const seen: boolean[] = [];
    let stale = false;
    let beats = 0;
    const { consumer, made } = setup({
      eachBatch: async (payload, beat) => {
        seen.push(consumer.moving(payload, beat));
        // A failed heartbeat is noticed between two pieces of work, then thrown to kafkajs.
        for (let turn = 0; !beat.failed && turn < 1000; turn += 1)
          await new Promise((resolve) => setImmediate(resolve));
        seen.push(consumer.moving(payload, beat));
      },
    });
    await consumer.start();
    const payload = (heartbeat: () => Promise<void>) =>
      ({
        batch: { topic: 't.events', partition: 0, messages: [message('0')] },
        heartbeat,
        resolveOffset: () => {},
        isRunning: () => true,
        isStale: () => stale,
      }) as unknown as EachBatchPayload;
    jest.useFakeTimers({ doNotFake: ['setImmediate'] });
    try {
      const run = made.run!.eachBatch!(
        payload(() => {
          beats += 1;
          return Promise.reject(new Error('REBALANCE_IN_PROGRESS'));
        }),
      );
      jest.advanceTimersByTime(timing.heartbeatIntervalMs);
      await expect(run).rejects.toThrow('REBALANCE_IN_PROGRESS');
    } finally {
      jest.useRealTimers();
    }
    expect(seen).toEqual([false, true]);
    expect(beats).toBe(1);
    stale = true;
    expect(
      consumer.moving(
        payload(() => Promise.resolve()),
        { failed: false } as never,
      ),
    ).toBe(true);
  });

  it('hands single messages to the handler with kafkajs committing them, and refuses batch commits', async () => {
    const handled: string[] = [];
    const { consumer, made } = setup({
      eachMessage: (payload) => {
        handled.push(payload.message.offset);
        return Promise.resolve();
      },
    });
    await consumer.start();
    expect(made.run).not.toHaveProperty('autoCommit');
    expect(made.run).toMatchObject({ partitionsConsumedConcurrently: 3 });
    await made.run!.eachMessage!({
      topic: 't.events',
      partition: 0,
      message: message('9'),
      heartbeat: () => Promise.resolve(),
      pause: () => () => {},
    });
    expect(handled).toEqual(['9']);
    await expect(
      consumer.handled({ batch: { messages: [message('9')] }, resolveOffset: () => {} } as unknown as EachBatchPayload),
    ).rejects.toThrow('committed by kafkajs');
  });
});
