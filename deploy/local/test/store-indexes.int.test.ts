import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { COLLECTIONS, recordIdFor, TenantVersions, userIdFor, type WebhookEndpointDoc } from '@vigil/proto';
import { recordStream } from '../../../moderator/src/domain/stream-names';
import { MongoClient, type Db } from 'mongodb';
import pino from 'pino';
import { ulid } from 'ulid';
import { TenantStore } from '../../../gateway/src/store/tenant-store';
import { ConfigVersionStore } from '../../../gateway/src/store/config-version-store';
import { WebhookStore } from '../../../gateway/src/store/webhook-store';
import { EventStore } from '../../../moderator/src/store/event-store';
import { isMarker } from '../../../moderator/src/store/outbox-store';
import { TenantConfigCache } from '../../../moderator/src/store/tenant-config';
import { stageRecord, stageUser } from '../../../moderator/src/domain/stream';
import { buildBody } from '../../../notifier/src/delivery/payload';
import { DeliveryStore, newDelivery, type DeliveryDoc } from '../../../notifier/src/store/delivery-store';
import { EndpointStateStore } from '../../../notifier/src/store/endpoint-states';
import { UpstreamReads } from '../../../notifier/src/store/upstream-reads';
import { startMongo, type LocalMongo } from '../mongo';

/**
 * The default local store (FerretDB on PostgreSQL) with auto_explain logging the plan of every statement FerretDB
 * sends, and sequential scans priced out: a plan still holds a Seq Scan only where no index can serve the query. Each
 * hot-path operation of each service runs through the service's own store code, and its plans are read back.
 */
interface PlanNode {
  'Node Type': string;
  'Actual Rows'?: number;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

let mongo: LocalMongo;
let client: MongoClient;
let db: Db;
let dir: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-explain-'));
  mongo = await startMongo({
    dir,
    kind: 'ferretdb',
    ephemeral: true,
    durable: false,
    pgSettings: {
      session_preload_libraries: 'auto_explain',
      'auto_explain.log_min_duration': '0',
      'auto_explain.log_format': 'json',
      // Actual row counts in each logged plan: what PostgreSQL handed FerretDB, which decodes and filters each row.
      'auto_explain.log_analyze': 'on',
      'auto_explain.log_timing': 'off',
      enable_seqscan: 'off',
      log_line_prefix: '<<%p>> ',
    },
  });
  client = new MongoClient(mongo.url);
  await client.connect();
  db = client.db('vigil_explain', { ignoreUndefined: true });
});

afterAll(async () => {
  await client?.close();
  await mongo?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The plans PostgreSQL logged while `operation` ran. */
async function plansOf(operation: () => Promise<unknown>): Promise<{ query: string; scans: string[] }[]> {
  const logFile = mongo.postgres!.logFile;
  const from = fs.statSync(logFile).size;
  await operation();
  const text = fs.readFileSync(logFile, 'utf8').slice(from);
  return text
    .split(/\n(?=<<\d+>> )/)
    .filter((entry) => entry.includes('plan:'))
    .map((entry) => {
      const plan = JSON.parse(entry.slice(entry.indexOf('plan:') + 5)) as { 'Query Text': string; Plan: PlanNode };
      const scans: string[] = [];
      const walk = (node: PlanNode) => {
        if (node['Node Type'] === 'Seq Scan') scans.push(node['Relation Name'] ?? '?');
        node.Plans?.forEach(walk);
      };
      walk(plan.Plan);
      return { query: plan['Query Text'], scans };
    });
}

/** Rows PostgreSQL returned to FerretDB for the services' collections while `operation` ran. */
async function rowsReadBy(operation: () => Promise<unknown>): Promise<number> {
  const logFile = mongo.postgres!.logFile;
  const from = fs.statSync(logFile).size;
  await operation();
  const text = fs.readFileSync(logFile, 'utf8').slice(from);
  let rows = 0;
  for (const entry of text.split(/\n(?=<<\d+>> )/)) {
    if (!entry.includes('plan:')) continue;
    const plan = JSON.parse(entry.slice(entry.indexOf('plan:') + 5)) as { 'Query Text': string; Plan: PlanNode };
    if (plan['Query Text'].includes('_ferretdb_database_metadata')) continue;
    rows += plan.Plan['Actual Rows'] ?? 0;
  }
  return rows;
}

/**
 * The outbox collection's table (FerretDB names a collection's table `<name>_<8 hex>`). It holds only the events still
 * to publish, so reading or emptying it whole is what the relay means to do; the test below shows it stays small.
 */
const OUTBOX_TABLE = /^outbox_[0-9a-f]{8}$/;

/**
 * Runs `operation` and expects every plan it caused on the services' collections to use an index (`scanOutbox`: the
 * outbox's own table may be read whole).
 */
async function expectIndexed(
  name: string,
  operation: () => Promise<unknown>,
  { scanOutbox = false }: { scanOutbox?: boolean } = {},
): Promise<void> {
  const plans = await plansOf(operation);
  // FerretDB's own catalogue is read by name once per collection and cached; it is not the services' data.
  const scanned = plans.filter((plan) =>
    plan.scans.some(
      (relation) => relation !== '_ferretdb_database_metadata' && !(scanOutbox && OUTBOX_TABLE.test(relation)),
    ),
  );
  expect({ name, scanned }).toEqual({ name, scanned: [] });
  // Nothing logged would mean the operation never reached PostgreSQL, and the check above proved nothing.
  expect({ name, planned: plans.length > 0 }).toEqual({ name, planned: true });
}

describe('hot-path queries on the default local store', () => {
  const tenantId = `ten_${ulid()}`;
  const userId = userIdFor(tenantId, 'user-1');
  const recordId = recordIdFor(tenantId, 'post-1');
  let events: EventStore;
  let deliveries: DeliveryStore;
  let endpointStates: EndpointStateStore;
  let reads: UpstreamReads;
  let endpoint: WebhookEndpointDoc;

  /** A delivery of a record.flagged webhook of the test record to the test endpoint, due at `dueAt`. */
  const deliveryDue = (dueAt: Date, body?: string): DeliveryDoc =>
    newDelivery(
      {
        _id: `dlv_${ulid()}`,
        tenantId,
        endpointId: endpoint._id,
        webhookId: `msg_${ulid()}`,
        eventId: ulid(),
        event: 'record.flagged',
        subjectId: `mod_${ulid()}`,
        trigger: {
          kind: 'record',
          event: 'record.flagged',
          subjectId: 'mod_x',
          tenantId,
          recordId,
          userId,
          status: 'Flagged',
          via: 'Automation',
          at: dueAt,
          version: 2,
        },
        body,
      },
      dueAt,
    );

  beforeAll(async () => {
    events = new EventStore(db);
    deliveries = new DeliveryStore(db, { bucketMs: 1000, graceMs: 1000 });
    endpointStates = new EndpointStateStore(db);
    reads = new UpstreamReads(db, endpointStates);
    await events.ensureIndexes();
    await deliveries.ensureIndexes();
    await new TenantStore(db).ensureIndexes();
    await new WebhookStore(db, new ConfigVersionStore(db, new TenantVersions())).ensureIndexes();
    const now = new Date();
    endpoint = {
      _id: `we_${ulid()}`,
      tenantId,
      url: 'https://example.com/hook',
      events: [],
      enabled: true,
      secrets: [{ secret: 'whsec_x', createdAt: now }],
      createdAt: now,
      updatedAt: now,
    };
    await db.collection<WebhookEndpointDoc>(COLLECTIONS.webhookEndpoints).insertOne(endpoint);
    await db
      .collection<{ _id: string; [field: string]: unknown }>(COLLECTIONS.endpointStates)
      .insertOne({ _id: endpoint._id, tenantId, lastSuccessAt: now });
    await db
      .collection<{ _id: string; [field: string]: unknown }>(COLLECTIONS.settings)
      .insertOne({ _id: tenantId, testMode: false });
    await db
      .collection<{ _id: string; [field: string]: unknown }>(COLLECTIONS.rules)
      .insertOne({ _id: tenantId, rules: [] });
  });

  it('gateway: API key by hash, tenant settings and rules by id', async () => {
    const tenants = new TenantStore(db);
    await expectIndexed('api key by hash', () => tenants.findKeyByHash('0'.repeat(64)));
    await expectIndexed('tenant by id', () => tenants.findTenant(tenantId));
  });

  it('moderator: a persisted moderation with a user, and the outbox relay', async () => {
    const config = new TenantConfigCache(db, 0, pino({ level: 'silent' }), new TenantVersions());
    await expectIndexed('tenant config', () => config.get(tenantId));
    const record = await events.streams.loadRecord(recordId, false);
    const user = await events.streams.loadUser(userId, false);
    await expectIndexed('load record (fresh)', () => events.streams.loadRecord(recordId, true));
    await expectIndexed('load user (fresh)', () => events.streams.loadUser(userId, true));
    const context = { tenantId, correlationId: 'c' };
    const stagedUser = stageUser(
      user,
      { type: 'UpsertUser', userId, input: { clientId: 'user-1' }, passthrough: false },
      context,
    );
    const upserted = stageRecord(
      record,
      {
        type: 'UpsertRecord',
        recordId,
        input: {
          clientId: 'post-1',
          name: 'n',
          entity: 'post',
          content: { text: 't', imageUrls: [], externalUrls: [] },
          userId,
        },
        passthrough: false,
      },
      context,
    );
    const moderated = stageRecord(
      upserted,
      {
        type: 'ModerateRecord',
        moderationId: `mod_${ulid()}`,
        outcome: { status: 'Flagged', reasons: ['r'], rules: ['profanity'] },
        testMode: false,
      },
      context,
    );
    // One append, then the record's projection inserted and the user's.
    await expectIndexed('commit (append and project)', () => events.commit(stagedUser, moderated));
    await expectIndexed('project record again', () => events.projections.projectRecord(moderated.state));
    await expectIndexed('refresh flagged count', () => events.flagged.refreshFlaggedCount(tenantId, userId));
    await expectIndexed('record history', () => events.streams.readStream(recordStream(recordId), tenantId));
    // The commit's slot marker, no copy of its events.
    const outbox = await events.outbox.unpublished(10);
    expect(outbox.length).toBeGreaterThan(0);
    expect(outbox.filter((doc) => !isMarker(doc))).toEqual([]);
    await expectIndexed('outbox', () => events.outbox.unpublished(100), { scanOutbox: true });
    const slot = outbox[0]!._id;
    expect(slot.startsWith(`${events.outbox.instanceId}:`)).toBe(true);
    const inSlot = await events.outbox.slotEvents(slot);
    expect(inSlot.length).toBeGreaterThan(0);
    await expectIndexed('events of an outbox slot', () => events.outbox.slotEvents(slot));
    await expectIndexed('look events up', () => events.outbox.storedIds(inSlot.map((event) => event._id)));
    // By a list of ids: matched against the outbox's few markers and copies.
    await expectIndexed('take out of the outbox', () => events.outbox.removeEntries(outbox), { scanOutbox: true });
    // Published means gone from the outbox: however many events are stored, it holds only what is still to publish.
    expect(await events.outbox.unpublished(100)).toEqual([]);
  });

  it('notifier: fan-out, claim, payload and attempt of a delivery', async () => {
    await expectIndexed('active endpoints', () => reads.activeEndpoints(tenantId));
    const now = new Date(Date.now() - 1000);
    const delivery = (body?: string): DeliveryDoc => deliveryDue(now, body);
    const doc = delivery();
    await expectIndexed('insert deliveries', () => deliveries.insertNew([doc]));
    let claimed: DeliveryDoc[] = [];
    const claim = async (at = new Date()) => {
      claimed = await deliveries.claim(at, 1000, 8, () => 8);
    };
    await expectIndexed('claim', () => claim());
    expect(claimed.map((d) => d._id)).toEqual([doc._id]);
    const leased = claimed[0]!;
    await expectIndexed('endpoint', () => reads.endpoint(endpoint._id));
    await expectIndexed('endpoint state', () => endpointStates.endpointState(endpoint._id));
    await expectIndexed('payload', () => buildBody(reads, leased.trigger, { mayWait: false }));
    await expectIndexed('store body', () => deliveries.setBody(leased, '{}'));
    await expectIndexed('record attempt', () =>
      deliveries.recordAttempt(
        leased,
        { at: new Date(), durationMs: 3, statusCode: 500 },
        { state: 'pending', dueAt: new Date(Date.now() - 1) },
      ),
    );
    await expectIndexed('claim the retry', () => claim());
    expect(claimed.map((d) => d._id)).toEqual([doc._id]);

    // The consumer's insert, leased to the local worker; then both leases expire and are taken over.
    const fresh = delivery('{}');
    const lease = { ids: new Set([fresh._id]), until: new Date(Date.now() + 1000) };
    await expectIndexed('insert leased', () => deliveries.insertNew([fresh], lease));
    // Their lease buckets are read at their start, and taken over once the leases ended.
    await expectIndexed('take over expired leases', async () => {
      await claim(new Date(Date.now() + 10_000));
      if (claimed.length < 2) await claim(new Date(Date.now() + 12_000));
    });
    expect(claimed.map((d) => d._id).sort()).toEqual([doc._id, fresh._id].sort());
  });

  it("notifier: an idle notifier's polls read no more rows with 50,000 deliveries due in an hour than with none", async () => {
    const timing = { bucketMs: 1000, graceMs: 1000 };
    /** An idle notifier restarted on `name`: its polls over four seconds, five bucket widths. */
    const idlePolls = async (name: string) => {
      const store = new DeliveryStore(client.db(name, { ignoreUndefined: true }), timing);
      const start = Date.now();
      return rowsReadBy(async () => {
        for (let k = 0; k <= 16; k += 1) {
          expect(await store.claim(new Date(start + k * 250), 1000, 8, () => 8)).toEqual([]);
        }
      });
    };
    const prepare = async (name: string, seeded: number) => {
      const store = new DeliveryStore(client.db(name, { ignoreUndefined: true }), timing);
      await store.ensureIndexes();
      await store.claim(new Date(), 1000, 8, () => 8);
      const dueAt = new Date(Date.now() + 3_600_000);
      for (let from = 0; from < seeded; from += 5000) {
        const batch = Array.from({ length: Math.min(5000, seeded - from) }, () => deliveryDue(dueAt, '{}'));
        const inserted = await store.insertNew(batch);
        expect(inserted.size).toBe(batch.length);
      }
    };
    await prepare('vigil_idle_empty', 0);
    await prepare('vigil_idle_seeded', 50_000);
    const empty = await idlePolls('vigil_idle_empty');
    const seeded = await idlePolls('vigil_idle_seeded');
    expect(empty).toBeGreaterThanOrEqual(0);
    expect(seeded).toBeLessThanOrEqual(empty);
  });
});
