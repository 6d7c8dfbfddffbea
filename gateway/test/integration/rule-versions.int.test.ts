import { COLLECTIONS, recordIdFor } from '@vigil/proto';
import { errorOf } from './api-support';
import { startModeratorStack, type Gateway, type ModeratorStack } from './harness';

/** Rule set versions through the API, judged by the real moderator (built dist) on the gateway's database. */
let stack: ModeratorStack;
let gw: Gateway;
let tenant: { tenantId: string; key: string; keyId: string };
let other: { tenantId: string; key: string };

const words = (id: string, list: string[]) => ({
  rules: [{ id, name: id, strategies: [{ type: 'blocklist', words: list }] }],
});

beforeAll(async () => {
  stack = await startModeratorStack({ name: 'gwver' });
  ({ gw } = stack);
  tenant = await gw.newTenant();
  other = await gw.newTenant();
});
afterAll(async () => {
  await stack?.close();
});

const call = (method: string, path: string, body?: unknown, key = tenant.key) =>
  gw.request(method, `/api/v1${path}`, { key, ...(body === undefined ? {} : { body }) });
const moderate = async (clientId: string, text: string) => {
  const reply = await call('POST', '/moderate', { clientId, name: 'n', entity: 'post', content: text });
  expect(reply.status).toBe(200);
  return reply.body as { status: string; ruleSetVersion: number };
};

describe('rule set versions', () => {
  it('writes, drafts, diffs, promotes and rolls back versions, and each moderation names the one that judged it', async () => {
    expect((await call('GET', '/rules')).body).toMatchObject({ version: 0 });
    expect(await moderate('v0', 'an otter swims')).toMatchObject({ status: 'Compliant', ruleSetVersion: 0 });

    const put = await call('PUT', '/rules', { ...words('animals', ['otter']), note: 'otters are off topic' });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ rules: [{ id: 'animals' }], version: 1 });
    expect(await moderate('v1', 'an otter swims')).toMatchObject({ status: 'Flagged', ruleSetVersion: 1 });

    // A draft beside the live set judges nothing.
    const draft = await call('POST', '/rules/versions', { ...words('animals', ['otter', 'heron']), note: 'herons' });
    expect(draft.status).toBe(201);
    expect(draft.body).toMatchObject({
      data: { version: 2, kind: 'draft', live: false, author: `api_key:${tenant.keyId}`, note: 'herons' },
    });
    expect(await moderate('v1-heron', 'a heron stands')).toMatchObject({ status: 'Compliant', ruleSetVersion: 1 });

    const diff = await call('GET', '/rules/versions/1/diff?to=2');
    expect(diff.status).toBe(200);
    expect(diff.body).toMatchObject({ from: 1, to: 2, added: [], removed: [], unchanged: [] });
    expect((diff.body as { changed: { id: string }[] }).changed.map((c) => c.id)).toEqual(['animals']);
    const fromDefault = await call('GET', '/rules/versions/2/diff?to=0');
    expect((fromDefault.body as { removed: { id: string }[] }).removed.map((r) => r.id)).toEqual(['animals']);

    const promoted = await call('POST', '/rules/versions/2/promote');
    expect(promoted.status).toBe(200);
    expect(promoted.body).toMatchObject({ version: 2 });
    expect(await moderate('v2-heron', 'a heron stands')).toMatchObject({ status: 'Flagged', ruleSetVersion: 2 });

    const rolledBack = await call('POST', '/rules/versions/1/rollback', { note: 'herons are fine after all' });
    expect(rolledBack.status).toBe(201);
    expect(rolledBack.body).toMatchObject({ version: 3 });
    expect(await moderate('v3-heron', 'a heron stands')).toMatchObject({ status: 'Compliant', ruleSetVersion: 3 });

    const list = await call('GET', '/rules/versions');
    expect(list.status).toBe(200);
    const versions = (list.body as { data: { version: number; kind: string; live: boolean; basedOn?: number }[] }).data;
    expect(versions.map((v) => [v.version, v.kind, v.live])).toEqual([
      [3, 'live', true],
      [2, 'draft', false],
      [1, 'live', false],
    ]);
    expect(versions[0]?.basedOn).toBe(1);
    const older = await call('GET', '/rules/versions?limit=1&starting_after=3');
    expect(older.body).toMatchObject({ data: [{ version: 2 }], has_more: true });

    const one = await call('GET', '/rules/versions/2');
    expect(one.body).toMatchObject({ data: { version: 2, rules: [{ id: 'animals' }] } });

    // The record's history names the version of each moderation.
    const history = await call('GET', `/records/${recordIdFor(tenant.tenantId, 'v2-heron')}/events`);
    expect(history.status).toBe(200);
    const moderated = (history.body as { data: { type: string; data: { ruleSetVersion?: number } }[] }).data.find(
      (event) => event.type === 'RecordModerated',
    );
    expect(moderated?.data.ruleSetVersion).toBe(2);
  });

  it('answers 404 for a version the tenant does not have, 409 for promoting a live one, 400 for a bad draft', async () => {
    await call('PUT', '/rules', words('w', ['kestrel']));
    expect(errorOf(await call('GET', '/rules/versions/999'))).toEqual([404, 'not_found']);
    expect(errorOf(await call('GET', '/rules/versions/one'))).toEqual([404, 'not_found']);
    expect(errorOf(await call('GET', '/rules/versions/1', undefined, other.key))).toEqual([404, 'not_found']);
    expect(errorOf(await call('POST', '/rules/versions/1/promote'))).toEqual([409, 'conflict']);
    expect(errorOf(await call('POST', '/rules/versions/999/rollback', {}))).toEqual([404, 'not_found']);
    expect(errorOf(await call('POST', '/rules/versions', { rules: [{ id: 'x' }] }))).toEqual([400, 'validation_error']);
    expect(errorOf(await call('PUT', '/rules', { ...words('w', ['kestrel']), note: 'x'.repeat(501) }))).toEqual([
      400,
      'validation_error',
    ]);
    expect(errorOf(await call('GET', '/rules/versions?starting_after=zero'))).toEqual([400, 'validation_error']);
  });

  it('answers 409 limit_exceeded to every write of a version past the 1,000 of a tenant, and keeps the live set', async () => {
    const full = await gw.newTenant();
    const as = (method: string, path: string, body?: unknown) => call(method, path, body, full.key);
    // The tenant has used 998 version numbers (written here rather than by 998 requests).
    await gw.db
      .collection<{ _id: string; count: number }>(COLLECTIONS.ruleVersionCounters)
      .insertOne({ _id: full.tenantId, count: 998 });
    expect((await as('POST', '/rules/versions', words('d', ['egret']))).body).toMatchObject({ data: { version: 999 } });
    expect((await as('PUT', '/rules', words('w', ['ibis']))).body).toMatchObject({ version: 1000 });
    for (const [method, path, body] of [
      ['POST', '/rules/versions', words('d', ['stork'])],
      ['PUT', '/rules', words('w', ['stork'])],
      ['POST', '/rules/versions/999/rollback', {}],
    ] as const) {
      const reply = await as(method, path, body);
      expect({ path, status: reply.status, error: reply.body.error }).toEqual({
        path,
        status: 409,
        error: expect.objectContaining({ code: 'limit_exceeded', details: { limit: 1000 } }),
      });
    }
    expect((await as('GET', '/rules')).body).toMatchObject({ rules: [{ id: 'w' }], version: 1000 });
    // A draft saved before the bound may still be promoted: it writes no version.
    expect((await as('POST', '/rules/versions/999/promote')).body).toMatchObject({ version: 999 });
    const listed = await as('GET', '/rules/versions?limit=2');
    expect((listed.body.data as Array<{ version: number }>).map((v) => v.version)).toEqual([1000, 999]);
  });
});
