import { COLLECTIONS, recordIdFor, userIdFor } from '@vigil/proto';
import { parse } from 'csv-parse/sync';
import { grpcAddressOf, spawnModerator, uniqueName, type ServiceProcess } from '../../../deploy/test-support';
import { rebuildTransparencyCounts } from '../../../moderator/src/transparency/rebuild-counts';
import { startGateway, type Gateway } from './harness';

// The transparency report against the real stack, as two replicas: two gateways in process, each calling its own
// moderator process (one consumer group), Kafka and the MongoDB-wire store. Decisions of every kind are made through
// both, and the report, read through either, counts them all. Nothing sleeps: the counters are written before a
// decision is answered.
let moderators: ServiceProcess[];
let gateways: Gateway[];
let tenant: { tenantId: string; key: string };
let other: { tenantId: string; key: string };
let startedAt: number;

const RULES = { rules: [{ id: 'spam', name: 'Spam', strategies: [{ type: 'patterns', patterns: ['buy now'] }] }] };
const DAY_MS = 86_400_000;
const dayText = (ms: number) => new Date(ms).toISOString().slice(0, 10);
/** A period around now: yesterday to the day after tomorrow, so a run across midnight (UTC) still falls in it. */
const PERIOD = `from=${dayText(Date.now() - DAY_MS)}&to=${dayText(Date.now() + 2 * DAY_MS)}`;

const call = async (gw: Gateway, method: string, path: string, body?: unknown, key = tenant.key) => {
  const reply = await gw.request(method, `/api/v1${path}`, { key, ...(body === undefined ? {} : { body }) });
  if (reply.status >= 300) throw new Error(`${method} ${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body as { data?: { id: string } };
};

beforeAll(async () => {
  const stack = { dbName: uniqueName('gwtr'), topicPrefix: `${uniqueName('t')}.` };
  const group = uniqueName('grp');
  moderators = [0, 1].map(() => spawnModerator(stack, { TENANT_CONFIG_TTL_MS: '0', KAFKA_GROUP_ID: group }));
  gateways = await Promise.all(
    moderators.map(async (moderator) => startGateway({ moderatorAddress: await grpcAddressOf(moderator), ...stack })),
  );
  const [a] = gateways as [Gateway, Gateway];
  tenant = await a.newTenant();
  other = await a.newTenant();
  await call(a, 'PUT', '/rules', RULES);
  await call(a, 'PATCH', '/settings', { trustedFlaggers: [{ id: 'hotline', name: 'The Hotline' }] });
  startedAt = Date.now();

  const [one, two] = gateways as [Gateway, Gateway];
  const moderate = (gw: Gateway, clientId: string, text: string, user?: string) =>
    call(gw, 'POST', '/moderate', {
      clientId,
      name: 'n',
      entity: 'post',
      content: text,
      ...(user ? { user: { clientId: user } } : {}),
    });
  // Automated flags, through the first replica.
  for (const clientId of ['r1', 'r2', 'r3']) await moderate(one, clientId, 'buy now');
  // A person confirms one and overturns another, through the second.
  await call(two, 'POST', `/records/${recordIdFor(tenant.tenantId, 'r2')}/moderations`, {
    status: 'Flagged',
    reason: 'spam indeed',
  });
  await call(two, 'POST', `/records/${recordIdFor(tenant.tenantId, 'r3')}/moderations`, {
    status: 'Compliant',
    reason: 'an honest offer',
  });
  // Two users restricted by hand; both appeal; one appeal is rejected, the other approved (the user reinstated).
  await moderate(one, 'u1-post', 'a lovely day', 'u1');
  await moderate(one, 'u2-post', 'a lovely day', 'u2');
  const u1 = userIdFor(tenant.tenantId, 'u1');
  const u2 = userIdFor(tenant.tenantId, 'u2');
  await call(one, 'POST', `/users/${u1}/status`, { status: 'Suspended', reason: 'spam wave' });
  await call(two, 'POST', `/users/${u2}/status`, { status: 'Banned', reason: 'fraud' });
  const appeal1 = await call(one, 'POST', `/users/${u1}/appeals`, { text: 'not me' });
  const appeal2 = await call(two, 'POST', `/users/${u2}/appeals`, { text: 'a mistake' });
  await call(two, 'POST', `/appeals/${appeal1.data!.id}/decision`, { decision: 'Rejected', reason: 'it was' });
  await call(one, 'POST', `/appeals/${appeal2.data!.id}/decision`, { decision: 'Approved', reason: 'it was not' });
  // A user's notice of illegal content, acted on; a trusted flagger's report, not acted on.
  await moderate(one, 'r4', 'a lovely day');
  await moderate(one, 'r5', 'a lovely day');
  const notice = await call(one, 'POST', '/reports', {
    target: { type: 'record', clientId: 'r4' },
    reporter: { type: 'user', id: 'reader-1' },
    category: 'STATEMENT_CATEGORY_VIOLENCE',
    ground: 'ILLEGAL_CONTENT',
    legalGround: 'Criminal code',
    url: 'https://platform.example/p/4',
    goodFaith: true,
    explanation: 'a threat',
  });
  const flagged = await call(two, 'POST', '/reports', {
    target: { type: 'record', clientId: 'r5' },
    reporter: { type: 'trusted_flagger', id: 'hotline' },
    category: 'STATEMENT_CATEGORY_SCAMS_AND_FRAUD',
    explanation: 'a fake shop',
  });
  await call(two, 'POST', `/reports/${notice.data!.id}/decision`, {
    outcome: 'Actioned',
    action: 'Flag',
    reason: 'a threat',
  });
  await call(one, 'POST', `/reports/${flagged.data!.id}/decision`, { outcome: 'NoAction', reason: 'a real shop' });
}, 180_000);

afterAll(async () => {
  await Promise.all((gateways ?? []).map((gw) => gw.close()));
  await Promise.all((moderators ?? []).map((moderator) => moderator.stop()));
});

const category = (name: string) => `STATEMENT_CATEGORY_${name}`;

describe('the transparency report', () => {
  it('counts every kind of decision made through either replica, read through either', async () => {
    const elapsedS = (Date.now() - startedAt) / 1000;
    for (const gw of gateways) {
      const reply = await gw.request('GET', `/api/v1/transparency-report?${PERIOD}`, { key: tenant.key });
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
      const report = reply.body;
      expect(report.notices.received).toMatchObject({
        total: 2,
        bySource: { user: 1, trustedFlagger: 1 },
        byGround: { ILLEGAL_CONTENT: 1, INCOMPATIBLE_CONTENT: 1 },
      });
      expect(report.notices.received.byCategory[category('VIOLENCE')]).toBe(1);
      expect(report.notices.received.byCategory[category('SCAMS_AND_FRAUD')]).toBe(1);
      expect(report.notices.decided).toMatchObject({
        total: 2,
        actioned: 1,
        noAction: 1,
        bySource: { user: 1, trustedFlagger: 1 },
      });
      expect(report.notices.decided.actionedByCategory[category('VIOLENCE')]).toBe(1);
      for (const median of Object.values(report.notices.medianSecondsToDecide)) {
        expect(median).toBeGreaterThanOrEqual(0);
        expect(median).toBeLessThanOrEqual(elapsedS);
      }
      expect(report.notices.actions).toMatchObject({
        total: 1,
        bySource: { SOURCE_ARTICLE_16: 1, SOURCE_TRUSTED_FLAGGER: 0 },
        byAutomatedDecision: { AUTOMATED_DECISION_NOT_AUTOMATED: 1 },
      });
      expect(report.notices.actions.byRestriction.DECISION_VISIBILITY_CONTENT_DISABLED).toBe(1);
      // Three automated flags, one upheld by a person, one suspension and one ban by hand.
      expect(report.ownInitiative).toMatchObject({
        total: 6,
        byGround: { DECISION_GROUND_INCOMPATIBLE_CONTENT: 6, DECISION_GROUND_ILLEGAL_CONTENT: 0 },
        byAutomatedDecision: {
          AUTOMATED_DECISION_FULLY: 3,
          AUTOMATED_DECISION_PARTIALLY: 1,
          AUTOMATED_DECISION_NOT_AUTOMATED: 2,
        },
        automatedDetection: 4,
      });
      expect(report.ownInitiative.byCategory[category('OTHER_VIOLATION_TC')]).toBe(6);
      expect(report.ownInitiative.byRestriction).toMatchObject({
        DECISION_VISIBILITY_CONTENT_DISABLED: 4,
        DECISION_ACCOUNT_SUSPENDED: 1,
        DECISION_ACCOUNT_TERMINATED: 1,
      });
      expect(report.complaints).toMatchObject({
        received: { total: 2, byKind: { appeal: 2 } },
        decided: { total: 2, upheld: 1, reversed: 1 },
        reversals: { total: 2, afterComplaint: 1, byModerator: 1, automatic: 0 },
      });
      expect(report.complaints.medianSecondsToDecide).toBeLessThanOrEqual(elapsedS);
      expect(report.automatedMeans).toMatchObject({
        byAutomatedDecision: {
          AUTOMATED_DECISION_FULLY: 3,
          AUTOMATED_DECISION_PARTIALLY: 1,
          AUTOMATED_DECISION_NOT_AUTOMATED: 3,
        },
        automatedDetection: 4,
        reviews: { reviewed: 2, confirmed: 1, overturned: 1 },
        accuracy: 0.5,
        errorRate: 0.5,
      });
    }
    // Each moderator wrote its own day documents: no two processes update one.
    const docs = await gateways[0]!.db
      .collection(COLLECTIONS.transparencyCounts)
      .find({ tenantId: tenant.tenantId })
      .toArray();
    expect(new Set(docs.map((doc) => String(doc._id).split('|')[2])).size).toBe(2);
  });

  it('answers the same figures as CSV, by Accept header or format=csv, escaped as RFC 4180', async () => {
    const gw = gateways[1]!;
    const json = (await gw.request('GET', `/api/v1/transparency-report?${PERIOD}`, { key: tenant.key })).body;
    for (const reply of [
      await gw.request('GET', `/api/v1/transparency-report?${PERIOD}`, {
        key: tenant.key,
        headers: { accept: 'text/csv' },
      }),
      await gw.request('GET', `/api/v1/transparency-report?${PERIOD}&format=csv`, { key: tenant.key }),
    ]) {
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect(reply.headers.get('content-disposition')).toMatch(/^inline; filename="transparency-report-.+\.csv"$/);
      const rows = parse<Record<string, string>>(reply.body as string, { columns: true });
      expect(Object.keys(rows[0]!)).toEqual(['section', 'measure', 'breakdown', 'key', 'value']);
      const value = (section: string, measure: string, breakdown: string, key: string) =>
        rows.find(
          (row) => row.section === section && row.measure === measure && row.breakdown === breakdown && row.key === key,
        )?.value;
      expect(value('ownInitiative', 'total', '', '')).toBe('6');
      expect(value('notices', 'received', 'byCategory', category('VIOLENCE'))).toBe('1');
      expect(value('complaints', 'decided', '', 'reversed')).toBe('1');
      expect(value('automatedMeans', 'accuracy', '', '')).toBe('0.5');
      expect(value('notices', 'medianSecondsToDecide', '', 'user')).toBe(
        String(json.notices.medianSecondsToDecide.user),
      );
    }
    // JSON wins when asked for by format, whatever the Accept header says.
    const forced = await gw.request('GET', `/api/v1/transparency-report?${PERIOD}&format=json`, {
      key: tenant.key,
      headers: { accept: 'text/csv' },
    });
    expect(forced.body).toEqual(json);
  });

  it('shows another tenant none of it, and a period without decisions as zeros', async () => {
    const gw = gateways[0]!;
    for (const [key, query] of [
      [other.key, PERIOD],
      [tenant.key, 'from=2025-01-01&to=2026-01-01'],
    ] as const) {
      const report = (await gw.request('GET', `/api/v1/transparency-report?${query}`, { key })).body;
      expect(report.ownInitiative.total).toBe(0);
      expect(report.notices.received.total).toBe(0);
      expect(report.notices.medianSecondsToDecide.all).toBeNull();
      expect(report.automatedMeans.accuracy).toBeNull();
    }
  });

  it.each([
    ['', ['from', 'to']],
    ['from=2026-01-01', ['to']],
    ['from=2026-02-01&to=2026-02-01', ['to']],
    ['from=2026-03-01&to=2026-02-01', ['to']],
    ['from=2025-01-01&to=2026-01-03', ['to']],
    ['from=2026-02-30&to=2026-03-01', ['from']],
    ['from=yesterday&to=2026-03-01', ['from']],
    ['from=2026-01-01&to=2026-02-01&format=pdf', ['format']],
  ])('answers 400 validation_error for %j naming %j', async (query, paths) => {
    const reply = await gateways[0]!.request('GET', `/api/v1/transparency-report?${query}`, { key: tenant.key });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('validation_error');
    const named = (reply.body.error.details as Array<{ path: string[] }>).map((detail) => detail.path.join('.'));
    expect([...new Set(named)].sort()).toEqual(paths);
  });

  it('is in the OpenAPI document with its query, both media types and its bounds', async () => {
    const doc = (await gateways[0]!.request('GET', '/openapi.json')).body;
    const operation = doc.paths['/api/v1/transparency-report'].get;
    expect(operation.parameters.map((p: { name: string; required: boolean }) => [p.name, p.required])).toEqual([
      ['from', true],
      ['to', true],
      ['format', false],
    ]);
    expect(Object.keys(operation.responses['200'].content)).toEqual(['application/json', 'text/csv']);
    expect(JSON.stringify(operation.parameters)).toContain('366 days');
  });

  it('is recounted from the event store: the same report after its counters are wiped', async () => {
    const gw = gateways[0]!;
    const read = async () =>
      (await gw.request('GET', `/api/v1/transparency-report?${PERIOD}`, { key: tenant.key })).body as unknown;
    const before = await read();
    const counters = gw.db.collection(COLLECTIONS.transparencyCounts);
    await counters.deleteMany({ tenantId: tenant.tenantId });
    expect(((await read()) as { ownInitiative: { total: number } }).ownInitiative.total).toBe(0);
    // Every day up to the day after tomorrow: today's too (nothing else writes to this tenant now).
    const rebuilt = await rebuildTransparencyCounts(gw.db, tenant.tenantId, dayText(Date.now() + 2 * DAY_MS));
    expect(rebuilt.events).toBeGreaterThan(20);
    expect(await read()).toEqual(before);
    // Once more: it replaces, never adds.
    await rebuildTransparencyCounts(gw.db, tenant.tenantId, dayText(Date.now() + 2 * DAY_MS));
    expect(await read()).toEqual(before);
  });
});
