import { EventEmitter } from 'node:events';
import type { Consumer } from 'kafkajs';
import { Registry } from 'prom-client';
import { ConsumerMetrics, lagAfter, type InstrumentedConsumer } from './consumer-metrics';

const EVENTS = {
  GROUP_JOIN: 'consumer.group_join',
  FETCH: 'consumer.fetch',
  END_BATCH_PROCESS: 'consumer.end_batch_process',
  STOP: 'consumer.stop',
  CRASH: 'consumer.crash',
} as const;

/** A consumer that emits kafkajs' instrumentation events when the test says. */
function fakeConsumer() {
  const emitter = new EventEmitter();
  const consumer = {
    events: EVENTS as unknown as Consumer['events'],
    on: (name: string, listener: (event: unknown) => void) => {
      emitter.on(name, listener);
      return () => emitter.off(name, listener);
    },
  } as unknown as InstrumentedConsumer;
  const emit = (name: string, payload: unknown, timestamp = Date.now()) =>
    emitter.emit(name, { id: 1, type: name, timestamp, payload });
  return { consumer, emit };
}

const batch = (topic: string, partition: number, lastOffset: number, highWatermark: number) => ({
  topic,
  partition,
  lastOffset: String(lastOffset),
  highWatermark: String(highWatermark),
  firstOffset: '0',
  offsetLag: '0',
  offsetLagLow: '0',
  batchSize: 1,
  duration: 1,
});

async function values(registry: Registry, name: string): Promise<Array<[Record<string, unknown>, number]>> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  return (metric?.values ?? []).map((v) => [v.labels, v.value]);
}

describe('lagAfter', () => {
  it.each([
    ['caught up', '9', '10', 0],
    ['three behind', '9', '13', 3],
    ['a high watermark older than the batch (answered before a later append)', '12', '10', 0],
    ['offsets past 2^53', '9007199254740993', '9007199254741000', 6],
  ])('%s', (_name, lastOffset, highWatermark, expected) => {
    expect(lagAfter({ lastOffset, highWatermark })).toBe(expected);
  });
});

describe('ConsumerMetrics', () => {
  it('reports the lag of each partition handled, and drops the partitions a rebalance moved away', async () => {
    const registry = new Registry();
    const { consumer, emit } = fakeConsumer();
    new ConsumerMetrics(registry, 'svc_test_consumer').attach(consumer);

    emit(EVENTS.GROUP_JOIN, { memberAssignment: { ingest: [0, 1, 2] } });
    emit(EVENTS.END_BATCH_PROCESS, batch('ingest', 0, 99, 150));
    emit(EVENTS.END_BATCH_PROCESS, batch('ingest', 2, 9, 10));
    expect(await values(registry, 'svc_test_consumer_lag_messages')).toEqual([
      [{ topic: 'ingest', partition: '0' }, 50],
      [{ topic: 'ingest', partition: '2' }, 0],
    ]);
    expect(await values(registry, 'svc_test_consumer_assigned_partitions')).toEqual([[{ topic: 'ingest' }, 3]]);

    // A second replica joined and took partitions 0 and 1: this one must not go on reporting partition 0's lag.
    emit(EVENTS.GROUP_JOIN, { memberAssignment: { ingest: [2] } });
    expect(await values(registry, 'svc_test_consumer_lag_messages')).toEqual([
      [{ topic: 'ingest', partition: '2' }, 0],
    ]);
    expect(await values(registry, 'svc_test_consumer_assigned_partitions')).toEqual([[{ topic: 'ingest' }, 1]]);
    expect(await values(registry, 'svc_test_consumer_rebalances_total')).toEqual([[{}, 2]]);
  });

  it('shows when the member last fetched and last finished a batch', async () => {
    const registry = new Registry();
    const { consumer, emit } = fakeConsumer();
    new ConsumerMetrics(registry, 'svc_test_consumer').attach(consumer);
    expect(await values(registry, 'svc_test_consumer_last_fetch_timestamp_seconds')).toEqual([[{}, 0]]);

    emit(EVENTS.FETCH, { numberOfBatches: 0, duration: 3, nodeId: 1 }, 1_700_000_000_500);
    emit(EVENTS.END_BATCH_PROCESS, batch('events', 1, 5, 6), 1_700_000_001_250);
    expect(await values(registry, 'svc_test_consumer_last_fetch_timestamp_seconds')).toEqual([[{}, 1_700_000_000.5]]);
    expect(await values(registry, 'svc_test_consumer_last_batch_timestamp_seconds')).toEqual([[{}, 1_700_000_001.25]]);
  });

  it('holds nothing after a stop or a crash, and counts no rebalance for them', async () => {
    const registry = new Registry();
    const { consumer, emit } = fakeConsumer();
    new ConsumerMetrics(registry, 'svc_test_consumer').attach(consumer);
    emit(EVENTS.GROUP_JOIN, { memberAssignment: { events: [0, 1], commands: [0] } });
    emit(EVENTS.END_BATCH_PROCESS, batch('events', 1, 5, 8));

    emit(EVENTS.CRASH, { error: new Error('x'), groupId: 'g', restart: true });
    expect(await values(registry, 'svc_test_consumer_assigned_partitions')).toEqual([
      [{ topic: 'events' }, 0],
      [{ topic: 'commands' }, 0],
    ]);
    expect(await values(registry, 'svc_test_consumer_lag_messages')).toEqual([]);
    expect(await values(registry, 'svc_test_consumer_rebalances_total')).toEqual([[{}, 1]]);

    // More members than partitions: a join that brings nothing is still a rebalance.
    emit(EVENTS.GROUP_JOIN, { memberAssignment: {} });
    emit(EVENTS.STOP, null);
    expect(await values(registry, 'svc_test_consumer_rebalances_total')).toEqual([[{}, 2]]);
  });
});
