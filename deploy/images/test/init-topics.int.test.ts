import { spawn } from 'node:child_process';
import path from 'node:path';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { topicNames } from '@vigil/proto';
import { testServers, uniqueName } from '../../test-support';

// The chart's pre-install/pre-upgrade Job runs this script with the moderator image; here it runs the same way (a
// process with the Job's environment) against the real Kafka.
const SCRIPT = path.resolve(__dirname, '..', 'init-topics.js');
const { kafkaBrokers } = testServers();

interface Run {
  code: number | null;
  logs: Array<Record<string, unknown>>;
}

function runJob(env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SCRIPT], {
      env: { PATH: process.env.PATH ?? '', KAFKA_BROKERS: kafkaBrokers.join(','), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const logs = output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      resolve({ code, logs });
    });
  });
}

describe('init-topics (the chart topics Job)', () => {
  const prefix = `${uniqueName('init')}.`;
  const wanted = Object.values(topicNames(prefix)).sort();
  let admin: Admin;

  beforeAll(async () => {
    admin = new Kafka({ clientId: 'init-topics-test', brokers: kafkaBrokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
  });

  afterAll(async () => {
    await admin.deleteTopics({ topics: wanted }).catch(() => undefined);
    await admin.disconnect();
  });

  async function partitionCounts(): Promise<Record<string, number>> {
    const { topics } = await admin.fetchTopicMetadata({ topics: wanted });
    return Object.fromEntries(topics.map((topic) => [topic.name, topic.partitions.length]));
  }

  test('creates every topic with the configured partitions, then is a no-op', async () => {
    const first = await runJob({ KAFKA_TOPIC_PREFIX: prefix, TOPIC_PARTITIONS: '3' });
    expect(first.code).toBe(0);
    expect(
      first.logs
        .filter((line) => line.msg === 'topic created')
        .map((line) => line.topic)
        .sort(),
    ).toEqual(wanted);
    expect(await partitionCounts()).toEqual(Object.fromEntries(wanted.map((topic) => [topic, 3])));

    const again = await runJob({ KAFKA_TOPIC_PREFIX: prefix, TOPIC_PARTITIONS: '3' });
    expect(again.code).toBe(0);
    expect(again.logs.filter((line) => line.msg === 'topic created')).toEqual([]);
    expect(again.logs).toContainEqual(
      expect.objectContaining({ msg: 'topics ready', topics: wanted.length, short: 0 }),
    );
  });

  test('reports fewer partitions than configured, and grows them only when asked', async () => {
    const report = await runJob({ KAFKA_TOPIC_PREFIX: prefix, TOPIC_PARTITIONS: '4' });
    expect(report.code).toBe(0);
    expect(report.logs.filter((line) => line.msg === 'topic has fewer partitions than configured')).toHaveLength(
      wanted.length,
    );
    expect(Object.values(await partitionCounts())).toEqual(wanted.map(() => 3));

    const grow = await runJob({ KAFKA_TOPIC_PREFIX: prefix, TOPIC_PARTITIONS: '4', TOPIC_GROW_PARTITIONS: 'true' });
    expect(grow.code).toBe(0);
    expect(Object.values(await partitionCounts())).toEqual(wanted.map(() => 4));
  });

  test('refuses bad settings with a non-zero exit and a log line', async () => {
    const bad = await runJob({ KAFKA_TOPIC_PREFIX: prefix, TOPIC_PARTITIONS: 'six' });
    expect(bad.code).toBe(1);
    expect(bad.logs).toContainEqual(expect.objectContaining({ msg: 'topic initialisation failed', level: 60 }));
    const missing = await runJob({ KAFKA_BROKERS: '' });
    expect(missing.code).toBe(1);
  });
});
