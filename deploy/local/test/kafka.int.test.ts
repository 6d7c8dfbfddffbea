import { Kafka, logLevel, type Consumer, type EachMessagePayload } from 'kafkajs';
import { testServers, uniqueName, waitFor } from '../../test-support';

// Proves the broker version started by deploy/local/kafka.js works with kafkajs 2.2.4 for what the services use.
describe('Kafka with kafkajs', () => {
  const { kafkaBrokers } = testServers();
  const kafka = new Kafka({ clientId: uniqueName('kafka-test'), brokers: kafkaBrokers, logLevel: logLevel.NOTHING });
  const topic = uniqueName('foundation');
  const groupId = uniqueName('group');
  const admin = kafka.admin();
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  const consumers: Consumer[] = [];

  beforeAll(async () => {
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
    await producer.connect();
  });

  afterAll(async () => {
    await Promise.all(consumers.map((consumer) => consumer.disconnect()));
    await producer.disconnect();
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();
  });

  async function consume(received: string[], stopAfter: number): Promise<Consumer> {
    const consumer = kafka.consumer({ groupId, sessionTimeout: 10000, heartbeatInterval: 1000 });
    consumers.push(consumer);
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ message, partition }: EachMessagePayload) => {
        if (received.length >= stopAfter) return;
        received.push(message.value?.toString() ?? '');
        await consumer.commitOffsets([{ topic, partition, offset: (Number(message.offset) + 1).toString() }]);
      },
    });
    return consumer;
  }

  it('produces idempotently with acks from all replicas, joins a group, commits, and resumes after a restart', async () => {
    const first = Array.from({ length: 10 }, (_, i) => `m${i}`);
    const metadata = await producer.send({ topic, acks: -1, messages: first.map((value) => ({ key: 'k', value })) });
    expect(metadata[0]?.errorCode).toBe(0);

    const received: string[] = [];
    const consumer = await consume(received, first.length);
    await waitFor(() => received.length === first.length, { timeoutMs: 30000, what: 'first batch' });
    expect(received).toEqual(first);
    await consumer.disconnect();

    // Sent while no consumer runs: the restarted member of the same group must get exactly these.
    const second = Array.from({ length: 5 }, (_, i) => `n${i}`);
    await producer.send({ topic, acks: -1, messages: second.map((value) => ({ key: 'k', value })) });
    const afterRestart: string[] = [];
    await consume(afterRestart, second.length);
    await waitFor(() => afterRestart.length === second.length, { timeoutMs: 30000, what: 'second batch' });
    expect(afterRestart).toEqual(second);

    const offsets = await admin.fetchOffsets({ groupId, topics: [topic] });
    const committed = offsets[0]?.partitions.reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
    expect(committed).toBe(first.length + second.length);
  });
});
