import { Kafka, logLevel } from 'kafkajs';
import { freePortSync } from './ports';
import { E2eStack, type Receiver, type ServiceName } from './support';
import { loggedPort, testServers, waitFor, type ServiceProcess } from '../test-support';

// The guarantee of DESIGN §2 with real processes: while 1,000 ingests stream in, the moderator is SIGKILLed and
// restarted twice and the notifier once; afterwards every accepted ingest is a stored, moderated record, each command
// applied once, every stored event is on the events topic in stream order, and the webhook receiver got exactly one
// logical delivery (one webhook-id) per record status change.
const TOTAL = 1000;
/** How far ingest may run ahead of moderation, so the crashes fall while ingests still stream in. */
const AHEAD = 200;
const { kafkaBrokers } = testServers();

describe('ingest → moderation → webhook under crashes', () => {
  const stack = new E2eStack('crash');
  const { db, prefix, mongo } = stack;
  const grpcPort = freePortSync();
  // A short session lets the group hand a killed instance's partitions to its successor quickly.
  const moderatorEnv = {
    GRPC_PORT: String(grpcPort),
    KAFKA_GROUP_ID: `${prefix}moderator`,
    KAFKA_SESSION_TIMEOUT_MS: '6000',
  };
  const notifierEnv = {
    KAFKA_GROUP_ID: `${prefix}notifier`,
    KAFKA_SESSION_TIMEOUT_MS: '6000',
    WEBHOOK_RETRY_SCHEDULE_S: '0.2,0.5,1,1,1,1',
    DELIVERY_CONCURRENCY_PER_ENDPOINT: '16',
  };
  const kafka = new Kafka({ clientId: 'e2e-crash', brokers: kafkaBrokers, logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: `${prefix}check` });
  let receiver: Receiver;
  const start = (name: ServiceName, env: Record<string, string>) => stack.start(name, env);

  afterAll(async () => {
    await stack.close();
    await consumer.disconnect().catch(() => undefined);
  });

  it('loses nothing and applies everything once', async () => {
    receiver = await stack.receiver();
    let moderator = start('moderator', moderatorEnv);
    await loggedPort(moderator, 'grpc server listening');
    let notifier = start('notifier', notifierEnv);
    const gateway = start('gateway', {
      HTTP_PORT: '0',
      MODERATOR_ADDRESS: `127.0.0.1:${grpcPort}`,
      RATE_LIMIT_POINTS: '0',
    });
    const httpPort = await loggedPort(gateway, 'http server listening');
    const key = await stack.newTenant();
    const base = `http://127.0.0.1:${httpPort}/api/v1`;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const endpoint = await fetch(`${base}/webhook-endpoints`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: receiver.url }),
    });
    expect(endpoint.status).toBe(201);

    // Ingests stream in, kept at most AHEAD records ahead of moderation, while the moderator is killed twice and the
    // notifier once in the middle of their work. Every tenth record is profane and ends Flagged; the others Compliant.
    const database = mongo.db(db);
    let moderated = 0;
    let counting = false;
    const poll = setInterval(() => {
      if (counting) return;
      counting = true;
      database
        .collection('records')
        .countDocuments({ status: { $exists: true } })
        .then((n) => (moderated = n))
        .catch(() => undefined)
        .finally(() => (counting = false));
    }, 1000);
    const accepted = new Map<string, string>(); // clientId → record id
    let next = 0;
    const worker = async () => {
      while (next < TOTAL) {
        const i = next++;
        await waitFor(() => i < moderated + AHEAD, {
          timeoutMs: 120000,
          intervalMs: 50,
          what: 'moderation to catch up',
        });
        const clientId = `post-${i}`;
        const text = i % 10 === 0 ? `record ${i} is fucking awful` : `record ${i} is lovely`;
        const body = JSON.stringify({ clientId, name: `Post ${i}`, entity: 'post', content: { text } });
        const res = await waitFor(
          async () => {
            const r = await fetch(`${base}/ingest`, { method: 'POST', headers, body });
            return r.status === 202 ? r : undefined;
          },
          { timeoutMs: 60000, what: `ingest ${i} accepted` },
        );
        accepted.set(clientId, ((await res.json()) as { id: string }).id);
      }
    };
    const restart = async (service: ServiceProcess, name: 'moderator' | 'notifier', env: Record<string, string>) => {
      service.child.kill('SIGKILL');
      await service.exited;
      return start(name, env);
    };
    const crashes = async () => {
      const at = (what: string, done: () => boolean) => waitFor(done, { timeoutMs: 180000, intervalMs: 50, what });
      await at('250 records moderated', () => moderated >= 250);
      moderator = await restart(moderator, 'moderator', moderatorEnv);
      await at('300 webhooks received', () => receiver.received.length >= 300);
      notifier = await restart(notifier, 'notifier', notifierEnv);
      await at('600 records moderated', () => moderated >= 600);
      moderator = await restart(moderator, 'moderator', moderatorEnv);
    };
    try {
      await Promise.all([...Array.from({ length: 4 }, worker), crashes()]);
      expect(accepted.size).toBe(TOTAL);
      await waitFor(() => moderated === TOTAL, {
        timeoutMs: 300000,
        intervalMs: 500,
        what: 'every accepted record to be moderated',
      });
    } finally {
      clearInterval(poll);
    }
    const records = await database.collection('records').find({}).toArray();
    expect(records.map((r) => r._id).sort()).toEqual([...accepted.values()].sort());
    expect(records.filter((r) => r.status === 'Flagged')).toHaveLength(TOTAL / 10);

    // Each command applied once: one upsert and one moderation per record stream.
    const perStream = await database
      .collection('events')
      .aggregate<{ _id: { stream: string; type: string }; n: number }>([
        { $match: { type: { $in: ['RecordUpserted', 'RecordModerated'] } } },
        { $group: { _id: { stream: '$stream', type: '$type' }, n: { $sum: 1 } } },
      ])
      .toArray();
    expect(perStream).toHaveLength(2 * TOTAL);
    expect(perStream.filter((row) => row.n !== 1)).toEqual([]);

    // Every stored event reaches the events topic, in stream order; repeats only as identical re-publishes.
    const stored = await database
      .collection('events')
      .find({}, { projection: { _id: 1, stream: 1, version: 1 } })
      .toArray();
    const storedIds = new Set(stored.map((event) => String(event.id ?? event._id)));
    const seen = new Map<string, { stream: string; version: number; raw: string }>();
    const order = new Map<string, number[]>();
    const violations: string[] = [];
    await consumer.connect();
    await consumer.subscribe({ topic: `${prefix}vigil.events.v1`, fromBeginning: true });
    await consumer.run({
      eachMessage: ({ message }) => {
        const raw = message.value?.toString() ?? '';
        const event = JSON.parse(raw) as { id: string; stream: string; version: number };
        const first = seen.get(event.id);
        if (first) {
          if (first.raw !== raw) violations.push(`event ${event.id} re-published with different content`);
          return Promise.resolve();
        }
        seen.set(event.id, { stream: event.stream, version: event.version, raw });
        const versions = order.get(event.stream) ?? [];
        if (event.version !== versions.length + 1)
          violations.push(`${event.stream}: v${event.version} after v${versions.length}`);
        versions.push(event.version);
        order.set(event.stream, versions);
        return Promise.resolve();
      },
    });
    await waitFor(() => [...storedIds].every((id) => seen.has(id)), {
      timeoutMs: 300000,
      intervalMs: 500,
      what: 'every stored event on the events topic',
    });
    expect(violations).toEqual([]);

    // One logical webhook per record status change (null → Compliant or null → Flagged), each under one webhook-id.
    await waitFor(() => new Set(receiver.received.map((w) => w.headers['webhook-id'])).size >= TOTAL, {
      timeoutMs: 300000,
      intervalMs: 500,
      what: 'a webhook for every record',
    });
    const byRecord = new Map<string, Set<string>>();
    for (const webhook of receiver.received) {
      const body = JSON.parse(webhook.body) as { event: string; payload: { id: string } };
      if (!body.event.startsWith('record.')) continue;
      const ids = byRecord.get(body.payload.id) ?? new Set<string>();
      ids.add(String(webhook.headers['webhook-id']));
      byRecord.set(body.payload.id, ids);
    }
    expect([...byRecord.keys()].sort()).toEqual([...accepted.values()].sort());
    expect([...byRecord.values()].filter((ids) => ids.size !== 1)).toEqual([]);
  }, 900000);
});
