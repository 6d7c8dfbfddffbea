import { randomBytes } from 'node:crypto';
import {
  COLLECTIONS,
  HEADERS,
  SecretBox,
  tdbTokenContext,
  type DomainEvent,
  type TdbConfigDoc,
  type TdbSubmissionDoc,
} from '@vigil/proto';
import { tdbSubmissionIdOf } from '../../src/tdb/tdb-docs';
import type { Producer } from 'kafkajs';
import type { Db } from 'mongodb';
import pino from 'pino';
import { scratchDb, waitFor } from '../../../deploy/test-support';
import { startTdb, type TdbServer } from '../../../deploy/test-support/tdb';
import { TdbStore } from '../../src/store/tdb-store';
import type { TdbClient } from '../../src/tdb/tdb-client';
import { TdbSubmissions } from '../../src/tdb/tdb-submissions';
import { connectedProducer, createWorld, recordModerated, type Tenant, type World } from './harness';

/**
 * Submission to the Transparency Database in the notifier, on the real store: one tenant's answers cannot be stored as
 * they came, or not at all, while another tenant's statements, in the same batch, go through.
 */
const KEY = randomBytes(32);
const box = new SecretBox([KEY]);

let world: World;
let tdb: TdbServer;
let producer: Producer;

beforeAll(async () => {
  tdb = await startTdb();
  world = await createWorld();
  await world.start({
    SECRETS_ENCRYPTION_KEY: KEY.toString('base64'),
    TDB_POLL_MS: '100',
    TDB_BATCH_WAIT_MS: '200',
    TDB_TIMEOUT_MS: '5000',
    TDB_RETRY_SCHEDULE_S: '0.3,0.5',
  });
  producer = await connectedProducer('notifier-tdb-test');
});

afterAll(async () => {
  await producer?.disconnect();
  await world?.close();
  await tdb?.close();
});

/** Turns submission on for the tenant (in `db`), to the local database, from a minute ago. */
async function submitting(tenant: Tenant, db: Db = world.db): Promise<void> {
  const now = new Date();
  await db.collection<TdbConfigDoc>(COLLECTIONS.tdbConfigs).insertOne({
    _id: tenant.tenantId,
    sealed: box.seal(tdb.tokenFor(tenant.tenantId), tdbTokenContext(tenant.tenantId)),
    hint: '…',
    baseUrl: tdb.url,
    territorialScope: ['DE'],
    defaults: { contentType: ['CONTENT_TYPE_TEXT'] },
    enabledAt: new Date(now.getTime() - 60_000),
    updatedAt: now,
  });
}

/** Every event under one key: one partition, so the tenants' events come in the same batches. */
async function publishTogether(events: DomainEvent[]): Promise<void> {
  await producer.send({
    topic: world.topics.events,
    acks: -1,
    messages: events.map((event) => ({
      key: 'one-partition',
      value: JSON.stringify(event),
      headers: { [HEADERS.eventId]: event.id, [HEADERS.eventType]: event.type },
    })),
  });
}

const logOf = (tenantId: string, db: Db = world.db) =>
  db.collection<TdbSubmissionDoc>(COLLECTIONS.tdbSubmissions).find({ tenantId }).toArray();

async function counted(name: string, label: string): Promise<Record<string, number>> {
  const metric = await world.registry.getSingleMetric(name)?.get();
  return Object.fromEntries(metric?.values.map((value) => [value.labels[label], value.value]) ?? []);
}

describe('Transparency Database answers the store cannot hold as they came', () => {
  it("logs one tenant's refusal holding a NUL character without it, and submits and logs another tenant's statements", async () => {
    const refused = world.tenant();
    const healthy = world.tenant();
    await Promise.all([submitting(refused), submitting(healthy)]);
    // PostgreSQL, under FerretDB, refuses any string with a NUL: the refusal's messages could not be stored as sent.
    tdb.refuseFor(refused.tenantId, { category: ['The selected category\u0000 is invalid.'] });
    const events: DomainEvent[] = [];
    for (const [index, tenant] of [refused, healthy, refused, healthy].entries()) {
      events.push(recordModerated(tenant, await tenant.record(`nul-${index}`)));
    }
    await publishTogether(events);

    const refusedLog = await waitFor(
      async () => {
        const docs = await logOf(refused.tenantId);
        return docs.length === 2 && docs.every((doc) => doc.state === 'failed') ? docs : undefined;
      },
      { timeoutMs: 30000, what: "the refused tenant's statements logged as failed" },
    );
    for (const doc of refusedLog) {
      expect(doc.rejection).toEqual({ category: ['The selected category is invalid.'] });
      expect(doc.attempts).toEqual([expect.objectContaining({ statusCode: 422, error: 'rejected' })]);
    }
    const healthyLog = await waitFor(
      async () => {
        const docs = await logOf(healthy.tenantId);
        return docs.length === 2 && docs.every((doc) => doc.state === 'submitted') ? docs : undefined;
      },
      { timeoutMs: 30000, what: "the other tenant's statements submitted" },
    );
    for (const doc of healthyLog) {
      const stored = tdb.stored.filter((entry) => entry.statement.puid === doc.eventId);
      expect(stored).toHaveLength(1);
      expect(doc.tdbUuid).toBe(stored[0]!.uuid);
    }
    expect(tdb.stored.some((entry) => entry.platform === refused.tenantId)).toBe(false);
    expect(await counted('notifier_tdb_statements_total', 'result')).toMatchObject({ rejected: 2, submitted: 2 });
    expect(await counted('notifier_tdb_set_aside_total', 'reason')).toEqual({});
  });

  it("logs a refusal the store refuses without it, with the other statements of its call and another tenant's", async () => {
    // A refusal naming a field the store cannot hold as a key ('$…'): the log entry is written without it. A database of
    // its own: the notifier's retries must not take these statements over.
    const scratch = scratchDb('tdbkeys');
    try {
      const refused = world.tenant();
      const healthy = world.tenant();
      await Promise.all([submitting(refused, scratch.db), submitting(healthy, scratch.db)]);
      const events: DomainEvent[] = [];
      for (const [index, tenant] of [refused, refused, refused, healthy].entries()) {
        events.push(recordModerated(tenant, await tenant.record(`key-${index}`)));
      }
      const client: TdbClient = {
        submit: ({ statements }) =>
          Promise.resolve(
            statements.some((statement) => statement.puid === events[1]!.id)
              ? { kind: 'refused', durationMs: 1, statusCode: 422, errors: new Map([[1, { $where: ['refused'] }]]) }
              : { kind: 'created', durationMs: 1, statusCode: 201, uuids: new Map() },
          ),
        exists: () => Promise.resolve(false),
        close: () => Promise.resolve(),
      };
      const setAside = new Map<string, number>();
      const submissions = new TdbSubmissions({
        store: new TdbStore(scratch.db, { bucketMs: 1000, graceMs: 1000 }),
        client,
        secrets: box,
        log: pino({ level: 'silent' }),
        retryScheduleS: [60],
        pollMs: 1000,
        leaseMs: 10_000,
        concurrency: 2,
        onSetAside: (reason, count) => setAside.set(reason, (setAside.get(reason) ?? 0) + count),
      });
      await submissions.submit(events);

      const log = new Map((await logOf(refused.tenantId, scratch.db)).map((doc) => [doc._id, doc]));
      expect(log.size).toBe(3);
      const [first, second, third] = events.slice(0, 3).map((event) => log.get(tdbSubmissionIdOf(event.id)));
      expect(second).toMatchObject({ state: 'failed', lastError: 'rejected' });
      expect(second?.rejection).toBeUndefined();
      for (const doc of [first, third]) expect(doc).toMatchObject({ state: 'pending', lastError: 'batch_refused' });
      expect(await logOf(healthy.tenantId, scratch.db)).toEqual([expect.objectContaining({ state: 'submitted' })]);
      expect(setAside).toEqual(new Map([['answer_not_logged', 1]]));
    } finally {
      await scratch.drop();
    }
  });
});
