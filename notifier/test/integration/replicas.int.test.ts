import { Kafka, logLevel, type Admin, type Producer } from 'kafkajs';
import { HEADERS, ulid, type DomainEvent } from '@vigil/proto';
import { adminPortOf, spawnService, testServers, waitFor, type ServiceProcess } from '../../../deploy/test-support';
import { createWorld, type World } from './harness';

// Two notifier processes in one consumer group, with the consumer timing's defaults (the harness sets none), as the
// chart runs them. One is SIGKILLed (it never leaves the group), then the other while a replacement starts at once.
// Each time, a message on every partition must be consumed within HANDOVER_BOUND_MS: 10 s is the goal (a 6 s session,
// a 1 s heartbeat, the join), and the margin keeps the bound on a busy 2-core machine. Under the former 30 s session
// the dead member's partitions waited 30 s.
const HANDOVER_BOUND_MS = 15000;
const PARTITIONS = 3;

const servers = testServers();
let world: World;
let kafka: Kafka;
let admin: Admin;
let producer: Producer;
const processes: ServiceProcess[] = [];

function spawnNotifier(): ServiceProcess {
  const child = spawnService('notifier', {
    ...world.env,
    MONGO_URL: servers.mongoUrl,
    KAFKA_BROKERS: servers.kafkaBrokers.join(','),
    ADMIN_PORT: '0',
    ADMIN_HOST: '127.0.0.1',
  });
  processes.push(child);
  return child;
}

/** An event the notifier reads and commits without any webhook, email or payment action. */
function quietEvent(tenantId: string): DomainEvent {
  const userId = `usr_${ulid()}`;
  return {
    id: ulid(),
    tenantId,
    stream: `user-${userId}`,
    version: 1,
    occurredAt: new Date().toISOString(),
    correlationId: ulid(),
    type: 'UserUpserted',
    data: { userId, clientId: 'probe', protected: false, passthrough: true },
  };
}

/** The group's committed offset of each partition. */
async function committed(): Promise<Map<number, bigint>> {
  const [topic] = await admin.fetchOffsets({ groupId: world.env.KAFKA_GROUP_ID!, topics: [world.topics.events] });
  return new Map((topic?.partitions ?? []).map((p) => [p.partition, BigInt(p.offset)]));
}

/**
 * Publishes one event to every partition and resolves, per partition, with the milliseconds until the group had
 * committed past it (the notifier commits within KAFKA_COMMIT_INTERVAL_MS of handling a batch).
 */
async function probe(tenantId: string): Promise<number[]> {
  const sentAt = Date.now();
  const results = await Promise.all(
    Array.from({ length: PARTITIONS }, async (_, partition) => {
      const event = quietEvent(tenantId);
      const [meta] = await producer.send({
        topic: world.topics.events,
        acks: -1,
        messages: [
          {
            partition,
            key: event.stream,
            value: JSON.stringify(event),
            headers: { [HEADERS.eventId]: event.id, [HEADERS.eventType]: event.type },
          },
        ],
      });
      return { partition, offset: BigInt(meta!.baseOffset!) };
    }),
  );
  const latency = new Map<number, number>();
  await waitFor(
    async () => {
      const offsets = await committed();
      for (const { partition, offset } of results) {
        if (!latency.has(partition) && (offsets.get(partition) ?? -1n) > offset) {
          latency.set(partition, Date.now() - sentAt);
        }
      }
      return latency.size === PARTITIONS;
    },
    { timeoutMs: 45000, intervalMs: 100, what: 'every partition consumed' },
  );
  return [...latency.values()];
}

async function membersOfStableGroup(): Promise<number> {
  const { groups } = await admin.describeGroups([world.env.KAFKA_GROUP_ID!]);
  const group = groups[0];
  return group?.state === 'Stable' ? group.members.length : 0;
}

beforeAll(async () => {
  world = await createWorld();
  kafka = new Kafka({ clientId: 'replicas-test', brokers: servers.kafkaBrokers, logLevel: logLevel.NOTHING });
  admin = kafka.admin();
  await admin.connect();
  producer = kafka.producer();
  await producer.connect();
});

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop('SIGKILL')));
  await producer.disconnect();
  await admin.disconnect();
  await world.close();
});

it('hands a SIGKILLed replica’s partitions over, and keeps consuming while a replacement joins', async () => {
  const tenantId = `ten_${ulid()}`;
  const first = spawnNotifier();
  const second = spawnNotifier();
  await Promise.all([adminPortOf(first), adminPortOf(second)]);
  await waitFor(async () => (await membersOfStableGroup()) === 2, { timeoutMs: 45000, what: 'a group of two' });
  await probe(tenantId);

  // A crash: the member never leaves; the survivor consumes its own partitions meanwhile, and the dead one's after
  // its session expired.
  first.child.kill('SIGKILL');
  await first.exited;
  const afterCrash = await probe(tenantId);
  expect(Math.min(...afterCrash)).toBeLessThan(3000);
  expect(Math.max(...afterCrash)).toBeLessThan(HANDOVER_BOUND_MS);
  await waitFor(async () => (await membersOfStableGroup()) === 1, { timeoutMs: 45000, what: 'a group of one' });

  // A crash followed at once by its replacement, as a Deployment restarts a pod: the rebalance the replacement starts
  // waits for the dead member's session; every partition is consumed within the bound all along.
  const third = spawnNotifier();
  await adminPortOf(third);
  await waitFor(async () => (await membersOfStableGroup()) === 2, { timeoutMs: 45000, what: 'a group of two again' });
  second.child.kill('SIGKILL');
  await second.exited;
  const fourth = spawnNotifier();
  const during: number[] = [];
  const until = Date.now() + 12000;
  while (Date.now() < until) during.push(...(await probe(tenantId)));
  await adminPortOf(fourth);
  expect(Math.max(...during)).toBeLessThan(HANDOVER_BOUND_MS);
  await waitFor(async () => (await membersOfStableGroup()) === 2, { timeoutMs: 45000, what: 'the replacement in' });

  // The survivor's consumer metrics show its share, its rebalances, and that it is fetching.
  const metrics = await (await fetch(`http://127.0.0.1:${await adminPortOf(third)}/metrics`)).text();
  const sample = (name: string) =>
    [...metrics.matchAll(new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`, 'gm'))].map((m) => ({
      labels: m[1] ?? '',
      value: Number(m[2]),
    }));
  const events = `topic="${world.topics.events}"`;
  expect(
    sample('notifier_events_consumer_assigned_partitions').find((s) => s.labels.includes(events))?.value,
  ).toBeGreaterThan(0);
  expect(sample('notifier_events_consumer_lag_messages').some((s) => s.labels.includes(events))).toBe(true);
  expect(sample('notifier_events_consumer_rebalances_total')[0]?.value).toBeGreaterThanOrEqual(2);
  expect(sample('notifier_events_consumer_last_fetch_timestamp_seconds')[0]?.value).toBeGreaterThan(
    Date.now() / 1000 - 30,
  );
  expect(sample('notifier_events_consumer_last_batch_timestamp_seconds')[0]?.value).toBeGreaterThan(0);

  process.stdout.write(
    `handover after SIGKILL: ${afterCrash.join(', ')} ms; with a replacement joining: max ${Math.max(...during)} ms ` +
      `over ${during.length} probes\n`,
  );
});
