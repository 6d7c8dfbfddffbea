import { Webhook } from 'standardwebhooks';
import { adminPortOf, spawnService, testServers, waitFor, type ServiceProcess } from '../../../deploy/test-support';
import { webhookIdOf } from '../../src/domain/webhook-events';
import { SECRET, createReceiver, createWorld, recordModerated, type Receiver, type World } from './harness';

let world: World;
let hook: Receiver;
const processes: ServiceProcess[] = [];

function spawnNotifier(env: Record<string, string> = {}): ServiceProcess {
  const servers = testServers();
  const child = spawnService('notifier', {
    ...world.env,
    ...env,
    MONGO_URL: servers.mongoUrl,
    KAFKA_BROKERS: servers.kafkaBrokers.join(','),
    ADMIN_PORT: '0',
  });
  processes.push(child);
  return child;
}

beforeAll(async () => {
  world = await createWorld();
  hook = await createReceiver();
});

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop('SIGKILL')));
  await hook.close();
  await world.close();
});

it('delivers every webhook with the same webhook-id after the notifier is SIGKILLed mid-delivery', async () => {
  // Phase 1: the receiver takes requests and never answers, so deliveries are in flight when the process dies.
  let answering = false;
  hook.handler = (_req, res) => {
    if (answering) res.writeHead(200).end();
  };
  const tenant = world.tenant();
  await tenant.endpoint(hook.url);
  const before = await Promise.all(
    Array.from({ length: 6 }, async (_, i) => recordModerated(tenant, await tenant.record(`crash-${i}`))),
  );
  const first = spawnNotifier();
  await adminPortOf(first);
  await world.publish(...before);
  // Deliveries stored leased (claimed before their attempt, or not answered within the first attempt's wait).
  await waitFor(async () => (await world.deliveries({ tenantId: tenant.tenantId, state: 'sending' })).length >= 3, {
    what: 'deliveries in flight, stored',
  });
  first.child.kill('SIGKILL');
  await first.exited;
  const inFlight = new Set(
    (await world.deliveries({ tenantId: tenant.tenantId, state: 'sending' })).map((doc) => doc.webhookId),
  );

  // Events published while no notifier runs are consumed after the restart.
  const during = await Promise.all(
    Array.from({ length: 4 }, async (_, i) => recordModerated(tenant, await tenant.record(`down-${i}`))),
  );
  await world.publish(...during);

  answering = true;
  const second = spawnNotifier();
  const events = [...before, ...during];
  const expectedIds = events.map((e) => (e.data as { moderationId: string }).moderationId).sort();
  await waitFor(
    async () => {
      const docs = await world.deliveries({ tenantId: tenant.tenantId, state: 'succeeded' });
      return docs.length === events.length;
    },
    { what: 'every delivery succeeded', timeoutMs: 60000 },
  );

  const verifier = new Webhook(SECRET);
  const webhookIdBySubject = new Map<string, string>();
  for (const request of hook.received) {
    verifier.verify(request.body, request.headers as Record<string, string>);
    const id = (JSON.parse(request.body) as { id: string }).id;
    const webhookId = String(request.headers['webhook-id']);
    // Every request for one webhook event carries one webhook-id, before and after the crash.
    expect(webhookIdBySubject.get(id) ?? webhookId).toBe(webhookId);
    webhookIdBySubject.set(id, webhookId);
  }
  expect([...webhookIdBySubject.keys()].sort()).toEqual(expectedIds);
  for (const webhookId of inFlight) expect([...webhookIdBySubject.values()]).toContain(webhookId);
  // The delivery log shows the attempts the dead process had under way, then the one that succeeded.
  const delivered = await world.deliveries({ tenantId: tenant.tenantId, state: 'succeeded' });
  const cutShort = delivered.filter((doc) => inFlight.has(doc.webhookId));
  expect(cutShort).toHaveLength(inFlight.size);
  for (const doc of cutShort) {
    expect(doc.attemptCount).toBe(2);
    expect(doc.attempts.map((attempt) => attempt.error ?? attempt.statusCode)).toEqual(['interrupted', 200]);
  }
  // Those published while no notifier ran were attempted once; so were those the dead process sent without storing
  // them, which the receiver had twice.
  const later = new Set(during.map((e) => (e.data as { moderationId: string }).moderationId));
  const fresh = delivered.filter((doc) => later.has(doc.subjectId));
  expect(fresh).toHaveLength(during.length);
  for (const doc of fresh) expect(doc.attempts.map((attempt) => attempt.statusCode)).toEqual([200]);

  const metrics = await (await fetch(`http://127.0.0.1:${await adminPortOf(second)}/metrics`)).text();
  expect(metrics).toMatch(/notifier_deliveries_total\{result="success"\} \d+/);
  expect(metrics).toContain('notifier_delivery_duration_seconds_bucket');
  expect(metrics).toMatch(/notifier_deliveries_due \d+/);
  expect(metrics).toMatch(/notifier_delivery_workers_busy \d+/);
  expect(metrics).toMatch(/notifier_endpoint_slots_in_use \d+/);
  // Each delivery's outcome was an update; the deliveries went in by insert.
  expect(metrics).toMatch(/notifier_store_commands_total\{command="update",collection="deliveries"\} [1-9]/);
  expect(metrics).toMatch(/notifier_store_commands_total\{command="insert",collection="deliveries"\} [1-9]/);

  // Logs carry ids, never secrets, bodies, names or receiver URLs.
  const output = first.output() + second.output();
  expect(output).toContain('webhook delivered');
  for (const secretOrContent of [SECRET, hook.url, 'Name of crash-0', 'record.flagged"']) {
    expect(output).not.toContain(secretOrContent);
  }

  // A graceful stop exits 0.
  expect(await second.stop('SIGTERM')).toEqual({ code: 0, signal: null });
});

it('sends again, after a restart, a webhook whose notifier was SIGKILLed between its attempt and its insert', async () => {
  const tenant = world.tenant();
  await tenant.endpoint(hook.url);
  const record = await tenant.record('killed-1');
  let victim: ServiceProcess | undefined;
  hook.handler = (_req, res) => res.writeHead(200).end();
  // A first attempt's wait that holds on a busy machine: the delivery is stored only once the receiver answers.
  const notifier = spawnNotifier({ DELIVERY_FIRST_ATTEMPT_WAIT_MS: '5000' });
  await adminPortOf(notifier);
  // The record's partition has had its first batch since the notifier joined: the next event is read for the first
  // time, and its webhook is sent before its delivery is stored.
  const primer = recordModerated(tenant, record);
  await world.publish(primer);
  await waitFor(async () => (await world.deliveries({ eventId: primer.id, state: 'succeeded' })).length === 1, {
    what: 'the primer delivered',
    timeoutMs: 30_000,
  });
  const event = recordModerated(tenant, record, { status: 'Compliant', previousStatus: 'Flagged' });
  const webhookId = webhookIdOf(event.id);
  // The receiver has the request, and the notifier dies before it hears the answer: nothing is stored yet.
  hook.handler = (_req, res, received) => {
    if (received.headers['webhook-id'] === webhookId && !victim) {
      victim = notifier;
      notifier.child.kill('SIGKILL');
      return;
    }
    res.writeHead(200).end();
  };
  await world.publish(event);
  await waitFor(() => victim !== undefined, { what: 'the attempt made' });
  await notifier.exited;
  expect(await world.deliveries({ eventId: event.id })).toEqual([]);

  // The event's offset was not committed: the next notifier reads it again and delivers it.
  hook.handler = (_req, res) => res.writeHead(200).end();
  spawnNotifier();
  await waitFor(async () => (await world.deliveries({ eventId: event.id, state: 'succeeded' })).length === 1, {
    what: 'the webhook delivered again',
    timeoutMs: 60_000,
  });
  const sent = hook.received.filter((request) => request.headers['webhook-id'] === webhookId);
  expect(sent).toHaveLength(2);
  // The same bytes both times: the body is built from the event alone.
  expect(sent[1]!.body).toBe(sent[0]!.body);
  const [doc] = await world.deliveries({ eventId: event.id });
  expect(doc!.attempts.map((attempt) => attempt.statusCode)).toEqual([200]);
});
