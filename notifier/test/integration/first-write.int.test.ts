import { COLLECTIONS, type DomainEvent } from '@vigil/proto';
import { waitFor } from '../../../deploy/test-support';
import { deliveryIdOf, webhookIdOf } from '../../src/domain/webhook-events';
import type { DeliveryDoc } from '../../src/store/delivery-store';
import {
  createReceiver,
  createWorld,
  dueDelivery,
  recordModerated,
  type Receiver,
  type Tenant,
  type World,
} from './harness';

let world: World;
let hook: Receiver;

beforeAll(async () => {
  world = await createWorld();
  hook = await createReceiver();
});

afterAll(async () => {
  await hook.close();
  await world.close();
});

const writes = () => world.commandsOn(COLLECTIONS.deliveries).filter((name) => name !== 'find');
const webhookIdsReceived = () => hook.received.map((request) => String(request.headers['webhook-id']));

/** Publishes an event of the record and waits until its delivery succeeded (the partition's batches before it are done). */
async function delivered(tenant: Tenant, event: DomainEvent): Promise<DeliveryDoc> {
  await world.publish(event);
  let doc: DeliveryDoc | undefined;
  await waitFor(
    async () => {
      [doc] = await world.deliveries({ tenantId: tenant.tenantId, eventId: event.id, state: 'succeeded' });
      return doc !== undefined;
    },
    { what: 'the webhook delivered', timeoutMs: 20_000 },
  );
  return doc!;
}

/** A delivery another notifier claimed and is sending now, as its insert before sending stores it. */
async function claimedElsewhere(event: DomainEvent, endpointId: string, tenantId: string): Promise<void> {
  const now = new Date();
  await world.db.collection<DeliveryDoc>(COLLECTIONS.deliveries).insertOne({
    ...dueDelivery(tenantId, endpointId, now, {}),
    _id: deliveryIdOf(event.id, endpointId),
    webhookId: webhookIdOf(event.id),
    eventId: event.id,
    subjectId: (event.data as { moderationId: string }).moderationId,
    state: 'sending',
    dueAt: now,
    leaseUntil: new Date(now.getTime() + 3_600_000),
    leaseId: 'elsewhere',
  });
}

// The notifier starts in the first test, once the events it is to read again are published.
describe('one store write per delivered webhook', () => {
  it('claims first the events a partition held when it was assigned: an event another notifier claimed is not sent', async () => {
    const tenant = world.tenant();
    const endpoint = await tenant.endpoint(hook.url);
    const record = await tenant.record('reassigned-1');
    // Published before this notifier has the partition: another member may have had it, and have sent the webhook.
    const taken = recordModerated(tenant, record);
    await claimedElsewhere(taken, endpoint._id, tenant.tenantId);
    const own = recordModerated(tenant, await tenant.record('reassigned-2'));
    await world.publish(taken, own);
    // A wait that holds on a busy machine: these tests are about what is written, not how soon. The first retry comes
    // 3 s after a failed attempt, so that a failed delivery is looked at before the due queue claims it again.
    await world.start({ DELIVERY_FIRST_ATTEMPT_WAIT_MS: '5000', WEBHOOK_RETRY_SCHEDULE_S: '3,0.5,1' });
    // Its own delivery is claimed (inserted leased), then sent, then its outcome written: an insert and an update.
    await waitFor(async () => (await world.deliveries({ eventId: own.id, state: 'succeeded' })).length === 1, {
      what: 'the re-read event delivered',
      timeoutMs: 20_000,
    });
    const [stored] = await world.deliveries({ eventId: own.id });
    expect(stored!.attempts.map((attempt) => attempt.statusCode)).toEqual([200]);
    expect(writes().filter((name) => name === 'update').length).toBeGreaterThan(0);
    // A later event of the record's stream is the barrier: the batch of the other one was handled before it.
    await delivered(tenant, recordModerated(tenant, record, { status: 'Compliant', previousStatus: 'Flagged' }));
    expect(webhookIdsReceived()).not.toContain(webhookIdOf(taken.id));
    const [elsewhere] = await world.deliveries({ eventId: taken.id });
    expect(elsewhere).toMatchObject({ state: 'sending', leaseId: 'elsewhere', attemptCount: 0 });
  });

  it('stores a fresh event’s delivery with one insert that carries its attempt, and writes nothing more', async () => {
    const tenant = world.tenant();
    await tenant.endpoint(hook.url);
    const record = await tenant.record('fresh-1');
    // The record's partition has had its first batch since the notifier joined: what follows is read for the first time.
    await delivered(tenant, recordModerated(tenant, record));
    const before = writes().length;
    const leaseInserts = world.commandsOn(COLLECTIONS.deliveryLeases).length;
    const event = recordModerated(tenant, record, { status: 'Compliant', previousStatus: 'Flagged' });
    const doc = await delivered(tenant, event);
    expect(writes().slice(before)).toEqual(['insert']);
    expect(world.commandsOn(COLLECTIONS.deliveryLeases)).toHaveLength(leaseInserts);
    // The delivery log shows the delivery and its attempt as when the outcome was an update.
    expect(doc).toMatchObject({
      state: 'succeeded',
      attemptCount: 1,
      cycleAttempts: 1,
      lastStatusCode: 200,
      webhookId: webhookIdOf(event.id),
    });
    expect(doc.attempts).toEqual([expect.objectContaining({ statusCode: 200 })]);
    expect(doc.completedAt).toBeInstanceOf(Date);
    expect(doc.leaseId).toBeUndefined();
    expect(doc.due).toBeUndefined();
    expect(webhookIdsReceived().filter((id) => id === webhookIdOf(event.id))).toHaveLength(1);
  });

  it('stores a fresh event’s failed first attempt pending its retry in the same insert, and retries it', async () => {
    const tenant = world.tenant();
    let answer = 503;
    const failing = await createReceiver((_req, res) => res.writeHead(answer).end());
    try {
      await tenant.endpoint(failing.url);
      const record = await tenant.record('fresh-fail-1');
      // Primes the partition with a webhook that fails, then goes through.
      const primer = recordModerated(tenant, record);
      await world.publish(primer);
      await waitFor(async () => (await world.deliveries({ eventId: primer.id })).length === 1, {
        what: 'the primer stored',
        timeoutMs: 20_000,
      });
      answer = 200;
      await waitFor(async () => (await world.deliveries({ eventId: primer.id, state: 'succeeded' })).length === 1, {
        what: 'the primer delivered',
        timeoutMs: 20_000,
      });
      answer = 503;
      const before = writes().length;
      const event = recordModerated(tenant, record, { status: 'Compliant', previousStatus: 'Flagged' });
      await world.publish(event);
      let pending: DeliveryDoc | undefined;
      await waitFor(
        async () => {
          [pending] = await world.deliveries({ eventId: event.id });
          return pending !== undefined;
        },
        { what: 'the failed delivery stored', timeoutMs: 20_000 },
      );
      // Until the due queue claims it for its retry (a findAndModify), one insert.
      const after = writes().slice(before);
      const claimed = after.indexOf('findAndModify');
      expect(claimed === -1 ? after : after.slice(0, claimed)).toEqual(['insert']);
      expect(pending).toMatchObject({ state: 'pending', attemptCount: 1, lastStatusCode: 503, lastError: 'http_503' });
      // In the due queue: a time bucket, and no lease.
      expect(pending!.due).toBeDefined();
      expect(pending!.leaseId).toBeUndefined();
      answer = 200;
      await waitFor(async () => (await world.deliveries({ eventId: event.id, state: 'succeeded' })).length === 1, {
        what: 'the retry delivered',
        timeoutMs: 20_000,
      });
      const [done] = await world.deliveries({ eventId: event.id });
      expect(done!.attempts.map((attempt) => attempt.statusCode)).toEqual([503, 200]);
    } finally {
      await failing.close();
    }
  });

  it('claims first an event the moderator published again: one another notifier claimed is not sent', async () => {
    const tenant = world.tenant();
    const endpoint = await tenant.endpoint(hook.url);
    const record = await tenant.record('replayed-1');
    await delivered(tenant, recordModerated(tenant, record));
    const replayed = recordModerated(tenant, record, { status: 'Compliant', previousStatus: 'Flagged' });
    await claimedElsewhere(replayed, endpoint._id, tenant.tenantId);
    await world.republish(replayed);
    // The barrier, a later event of the same stream: the replayed one's batch was handled before it.
    await delivered(tenant, recordModerated(tenant, record, { status: 'Flagged', previousStatus: 'Compliant' }));
    expect(webhookIdsReceived()).not.toContain(webhookIdOf(replayed.id));
    const [elsewhere] = await world.deliveries({ eventId: replayed.id });
    expect(elsewhere).toMatchObject({ state: 'sending', leaseId: 'elsewhere' });
  });
});
