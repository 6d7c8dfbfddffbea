import { recordIdFor, userIdFor } from '@vigil/proto';
import { grpcAddressOf, waitFor } from '../../../deploy/test-support';
import { startGateway, startModeratorStack, type Gateway, type ModeratorStack } from './harness';

/** The real moderator (built dist), sharing the gateway's database and topics. */
let stack: ModeratorStack;
let gw: Gateway;
let impatient: Gateway;
let mistrusted: Gateway;
const WRONG_TOKEN = 'f'.repeat(64);
let tenant: { tenantId: string; key: string };
let other: { tenantId: string; key: string };

const PROFANE = 'you are a fucking idiot';
const postBody = (clientId: string) => ({ clientId, name: 'n', entity: 'post', content: 'fine' });

beforeAll(async () => {
  stack = await startModeratorStack({ name: 'gwmod', moderatorEnv: { TENANT_CONFIG_TTL_MS: '0' } });
  ({ gw } = stack);
  const moderatorAddress = await grpcAddressOf(stack.moderator);
  impatient = await startGateway({ moderatorAddress, ...stack.names, moderateTimeoutMs: 1 });
  mistrusted = await startGateway({ moderatorAddress, ...stack.names, moderatorToken: WRONG_TOKEN });
  tenant = await gw.newTenant();
  other = await gw.newTenant();
});
afterAll(async () => {
  await impatient?.close();
  await mistrusted?.close();
  await stack?.close();
});

describe('with the moderator', () => {
  it('moderates a record and returns the result with derived ids', async () => {
    const reply = await gw.request('POST', '/api/v1/moderate', {
      key: tenant.key,
      body: {
        clientId: 'm-1',
        name: 'A comment',
        entity: 'comment',
        content: PROFANE,
        user: { clientId: 'u-1', username: 'ann' },
        metadata: { lang: 'en' },
      },
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      id: recordIdFor(tenant.tenantId, 'm-1'),
      status: 'Flagged',
      moderation: expect.any(String),
      user: userIdFor(tenant.tenantId, 'u-1'),
      flagged: true,
      reasons: expect.any(Array),
      rules: ['profanity'],
      testMode: false,
      ruleSetVersion: 0,
      message: 'Success',
    });

    const clean = await gw.request('POST', '/api/v1/moderate', {
      key: tenant.key,
      body: { clientId: 'm-2', name: 'Hi', entity: 'comment', content: { text: 'a lovely day' } },
    });
    expect(clean.body).toMatchObject({ status: 'Compliant', flagged: false, rules: [] });
    expect(clean.body).not.toHaveProperty('user');
  });

  it("names the record's user metadata when its merge with the stored keys would exceed 50 keys", async () => {
    const keys = (prefix: string) => Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`${prefix}${i}`, i]));
    const send = (clientId: string, user: Record<string, unknown>, metadata?: Record<string, unknown>) =>
      gw.request('POST', '/api/v1/moderate', {
        key: tenant.key,
        body: { clientId, name: 'n', entity: 'post', content: 'hello', user, ...(metadata ? { metadata } : {}) },
      });
    expect((await send('mgu-1', { clientId: 'mgu', metadata: keys('k') })).status).toBe(200);
    const refused = await send('mgu-2', { clientId: 'mgu', metadata: keys('c') });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'validation_error', details: [{ path: ['user', 'metadata'] }] });
    // The record's own metadata keeps its own path.
    expect((await send('mgr', { clientId: 'mgr-u' }, keys('k'))).status).toBe(200);
    const record = await send('mgr', { clientId: 'mgr-u' }, keys('c'));
    expect(record.body.error).toMatchObject({ code: 'validation_error', details: [{ path: ['metadata'] }] });
  });

  it('says so in the moderate response when the tenant is in test mode', async () => {
    const tester = await gw.newTenant();
    const patched = await gw.request('PATCH', '/api/v1/settings', { key: tester.key, body: { testMode: true } });
    expect(patched.status).toBe(200);
    const reply = await gw.request('POST', '/api/v1/moderate', {
      key: tester.key,
      body: { clientId: 't-1', name: 'A comment', entity: 'comment', content: PROFANE },
    });
    expect(reply.body).toMatchObject({ status: 'Flagged', testMode: true });
  });

  it('reads records, their history and users through the API, per tenant', async () => {
    const id = recordIdFor(tenant.tenantId, 'm-1');
    const record = await gw.request('GET', `/api/v1/records/${id}`, { key: tenant.key });
    expect(record.status).toBe(200);
    expect(record.body.data).toMatchObject({
      id,
      clientId: 'm-1',
      name: 'A comment',
      entity: 'comment',
      metadata: { lang: 'en' },
      moderationStatus: 'Flagged',
      user: userIdFor(tenant.tenantId, 'u-1'),
    });
    expect((await gw.request('GET', `/api/v1/records/${id}`, { key: other.key })).status).toBe(404);

    const list = await gw.request('GET', '/api/v1/records?limit=1', { key: tenant.key });
    expect(list.body.data).toHaveLength(1);
    expect(list.body.has_more).toBe(true);
    const flagged = await gw.request('GET', '/api/v1/records?status=Flagged', { key: tenant.key });
    expect((flagged.body.data as Array<{ id: string }>).map((r) => r.id)).toEqual([id]);
    expect((await gw.request('GET', '/api/v1/records?status=flagged', { key: tenant.key })).status).toBe(400);
    expect((await gw.request('GET', '/api/v1/records?limit=101', { key: tenant.key })).status).toBe(400);

    const events = await gw.request('GET', `/api/v1/records/${id}/events`, { key: tenant.key });
    expect((events.body.data as Array<{ type: string }>).map((e) => e.type)).toEqual([
      'RecordUpserted',
      'RecordModerated',
    ]);

    const user = await gw.request('GET', `/api/v1/users/${userIdFor(tenant.tenantId, 'u-1')}`, { key: tenant.key });
    expect(user.body.data).toMatchObject({
      clientId: 'u-1',
      username: 'ann',
      actionStatus: 'Suspended',
      flaggedRecordsCount: 1,
    });
    expect((await gw.request('GET', '/api/v1/users', { key: other.key })).body).toEqual({ data: [], has_more: false });
  });

  it('records manual decisions and runs an appeal', async () => {
    const userId = userIdFor(tenant.tenantId, 'u-1');
    const recordId = recordIdFor(tenant.tenantId, 'm-2');
    const manual = await gw.request('POST', `/api/v1/records/${recordId}/moderations`, {
      key: tenant.key,
      body: { status: 'Flagged', reason: 'spam by hand' },
    });
    expect(manual.status).toBe(200);
    expect(manual.body.data).toMatchObject({ moderationStatus: 'Flagged', moderationStatusVia: 'Manual' });

    const banned = await gw.request('POST', `/api/v1/users/${userId}/status`, {
      key: tenant.key,
      body: { status: 'Banned', reason: 'repeat' },
    });
    expect(banned.body.data).toMatchObject({ actionStatus: 'Banned' });

    const appeal = await gw.request('POST', `/api/v1/users/${userId}/appeals`, {
      key: tenant.key,
      body: { text: 'please reconsider' },
    });
    expect(appeal.status).toBe(201);
    expect(appeal.body.data).toMatchObject({ user: userId, status: 'Open' });
    const listed = await gw.request('GET', '/api/v1/appeals?status=Open', { key: tenant.key });
    expect((listed.body.data as Array<{ id: string }>).map((a) => a.id)).toEqual([appeal.body.data.id]);
    const decided = await gw.request('POST', `/api/v1/appeals/${appeal.body.data.id}/decision`, {
      key: tenant.key,
      body: { decision: 'Rejected', reason: 'no' },
    });
    expect(decided.body.data).toMatchObject({ status: 'Rejected', decisionReason: 'no' });
    // One appeal per decision, as the appeal page allows: the ban stands, and so does the refusal.
    const second = await gw.request('POST', `/api/v1/users/${userId}/appeals`, {
      key: tenant.key,
      body: { text: 'please, again' },
    });
    expect(second.status).toBe(409);
    const again = await gw.request('POST', `/api/v1/appeals/${appeal.body.data.id}/decision`, {
      key: tenant.key,
      body: { decision: 'Approved', reason: 'changed my mind' },
    });
    expect(again.status).toBe(409);

    const missing = await gw.request('POST', `/api/v1/users/usr_missing/status`, {
      key: tenant.key,
      body: { status: 'Banned', reason: 'x' },
    });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');
  });

  it('answers 403 forbidden when acting on a protected user', async () => {
    const moderated = await gw.request('POST', '/api/v1/moderate', {
      key: tenant.key,
      body: { clientId: 'p-1', name: 'n', entity: 'post', content: 'fine', user: { clientId: 'vip', protected: true } },
    });
    expect(moderated.status).toBe(200);
    const reply = await gw.request('POST', `/api/v1/users/${moderated.body.user}/status`, {
      key: tenant.key,
      body: { status: 'Banned', reason: 'x' },
    });
    expect(reply.status).toBe(403);
    expect(reply.body.error.code).toBe('forbidden');
  });

  it('answers 409 conflict when appealing for a user who is not suspended or banned', async () => {
    const moderated = await gw.request('POST', '/api/v1/moderate', {
      key: tenant.key,
      body: { clientId: 'c-1', name: 'n', entity: 'post', content: 'fine', user: { clientId: 'fine-user' } },
    });
    expect(moderated.status).toBe(200);
    const reply = await gw.request('POST', `/api/v1/users/${moderated.body.user}/appeals`, {
      key: tenant.key,
      body: { text: 'why' },
    });
    expect(reply.status).toBe(409);
    expect(reply.body.error).toMatchObject({ code: 'conflict', details: { userId: moderated.body.user } });
  });

  it('answers 409 conflict, as the appeal page does, for a user reinstated after a ban or created by ingest', async () => {
    const moderated = await gw.request('POST', '/api/v1/moderate', {
      key: tenant.key,
      body: { clientId: 'c-reinstated', name: 'n', entity: 'post', content: 'fine', user: { clientId: 'reinstated' } },
    });
    const userId = moderated.body.user as string;
    for (const status of ['Banned', 'Compliant']) {
      const changed = await gw.request('POST', `/api/v1/users/${userId}/status`, {
        key: tenant.key,
        body: { status, reason: 'x' },
      });
      expect(changed.body.data).toMatchObject({ actionStatus: status });
    }
    const ingested = await gw.request('POST', '/api/v1/ingest/user', {
      key: tenant.key,
      body: { clientId: 'never-actioned' },
    });
    expect(ingested.status).toBe(202);
    const newUser = ingested.body.id as string;
    const appealOf = (id: string) =>
      gw.request('POST', `/api/v1/users/${id}/appeals`, { key: tenant.key, body: { text: 'why' } });
    expect((await appealOf(userId)).status).toBe(409);
    const fresh = await waitFor(
      async () => {
        const reply = await appealOf(newUser);
        return reply.status === 404 ? undefined : reply;
      },
      { timeoutMs: 60000, what: 'the ingested user to exist' },
    );
    expect(fresh.status).toBe(409);
    expect((await gw.request('GET', `/api/v1/appeals?user=${userId}`, { key: tenant.key })).body.data).toEqual([]);
  });

  it('moderates an ingested record asynchronously', async () => {
    const reply = await gw.request('POST', '/api/v1/ingest', {
      key: tenant.key,
      body: { clientId: 'i-1', name: 'Async', entity: 'post', content: { text: PROFANE } },
    });
    expect(reply.status).toBe(202);
    expect(reply.body.moderation).toMatch(/^mod_/);
    const record = await waitFor(
      async () => {
        const read = await gw.request('GET', `/api/v1/records/${reply.body.id}`, { key: tenant.key });
        return read.status === 200 && read.body.data.moderationStatus ? read.body.data : undefined;
      },
      { timeoutMs: 60000, what: 'the ingested record to be moderated' },
    );
    expect(record).toMatchObject({ clientId: 'i-1', moderationStatus: 'Flagged' });
  });

  it('answers 404 not_found when deleting an unknown clientId, 202 for a known one, 404 once it is deleted, for the record and its history', async () => {
    const unknown = await gw.request('DELETE', '/api/v1/ingest', { key: tenant.key, body: { clientId: 'never-sent' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');
    // Another tenant's record of the same clientId is unknown here too.
    const created = await gw.request('POST', '/api/v1/ingest', {
      key: other.key,
      body: {
        clientId: 'd-1',
        name: 'd-1 name',
        entity: 'post',
        content: { text: 'd-1 text' },
      },
    });
    await waitFor(
      async () => (await gw.request('GET', `/api/v1/records/${created.body.id}`, { key: other.key })).status === 200,
      { timeoutMs: 60000, what: 'the ingested record to be stored' },
    );
    const foreign = await gw.request('DELETE', '/api/v1/ingest', { key: tenant.key, body: { clientId: 'd-1' } });
    expect(foreign.status).toBe(404);

    const removal = await gw.request('DELETE', '/api/v1/ingest', { key: other.key, body: { clientId: 'd-1' } });
    expect(removal.status).toBe(202);
    expect(removal.body).toEqual({ message: 'Accepted', id: recordIdFor(other.tenantId, 'd-1') });
    await waitFor(
      async () => (await gw.request('GET', `/api/v1/records/${created.body.id}`, { key: other.key })).status === 404,
      { timeoutMs: 60000, what: 'the record to be deleted' },
    );
    // Its history holds its name and content: gone with it.
    const history = await gw.request('GET', `/api/v1/records/${created.body.id}/events`, { key: other.key });
    expect([history.status, history.body.error?.code]).toEqual([404, 'not_found']);
    expect(JSON.stringify(history.body)).not.toContain('d-1 text');
    const again = await gw.request('DELETE', '/api/v1/ingest', { key: other.key, body: { clientId: 'd-1' } });
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('not_found');
  });

  it('stores but does not moderate a record the roll-out skips, re-runs it in bulk, and re-moderates it while Flagged', async () => {
    const rolled = await gw.newTenant();
    const patch = await gw.request('PATCH', '/api/v1/settings', { key: rolled.key, body: { rolloutPercentage: 0 } });
    expect(patch.body.rolloutPercentage).toBe(0);
    const skipped = await gw.request('POST', '/api/v1/ingest', {
      key: rolled.key,
      body: { clientId: 'r-1', name: 'n', entity: 'post', content: { text: PROFANE } },
    });
    expect(skipped.status).toBe(202);
    expect(skipped.body.moderation).toBeNull();
    const stored = await waitFor(
      async () => {
        const read = await gw.request('GET', `/api/v1/records/${skipped.body.id}`, { key: rolled.key });
        return read.status === 200 ? read.body.data : undefined;
      },
      { timeoutMs: 60000, what: 'the skipped record to be stored' },
    );
    expect(stored.moderationStatus).toBeNull();

    const bad = await gw.request('POST', '/api/v1/records/moderations/rerun', { key: rolled.key, body: { limit: 0 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('validation_error');
    const rerun = await gw.request('POST', '/api/v1/records/moderations/rerun', {
      key: rolled.key,
      body: { entity: 'post' },
    });
    expect(rerun.status).toBe(202);
    expect(rerun.body).toEqual({ message: 'Accepted', count: 1, has_more: false });
    await waitFor(
      async () => {
        const read = await gw.request('GET', `/api/v1/records/${skipped.body.id}`, { key: rolled.key });
        return read.body.data?.moderationStatus === 'Flagged';
      },
      { timeoutMs: 60000, what: 'the re-run to flag the record' },
    );

    // Still outside the roll-out, but Flagged: the fixed content is moderated again (Iffy §4.8).
    const fixed = await gw.request('POST', '/api/v1/ingest', {
      key: rolled.key,
      body: { clientId: 'r-1', name: 'n', entity: 'post', content: { text: 'a kind word' } },
    });
    expect(fixed.body.moderation).toBeNull();
    await waitFor(
      async () => {
        const read = await gw.request('GET', `/api/v1/records/${skipped.body.id}`, { key: rolled.key });
        return read.body.data?.moderationStatus === 'Compliant';
      },
      { timeoutMs: 60000, what: 'the fixed record to be re-moderated' },
    );
  });

  it("refuses a list cursor that is not the tenant's item, naming it, and pages on from one that left the list", async () => {
    const own = await gw.newTenant();
    const send = (clientId: string, entity: string, user?: string) =>
      gw.request('POST', '/api/v1/moderate', {
        key: own.key,
        body: { clientId, name: 'n', entity, content: 'fine', ...(user ? { user: { clientId: user } } : {}) },
      });
    const pagers = [(await send('pg-1', 'pager', 'kept')).body.id, (await send('pg-2', 'pager')).body.id];
    const post = (await send('po-1', 'post', 'suspended')).body.id as string;
    const gone = (await send('pg-3', 'pager')).body.id as string;
    const foreign = (await gw.request('POST', '/api/v1/moderate', { key: other.key, body: postBody('fx-1') })).body.id;
    expect((await gw.request('DELETE', '/api/v1/ingest', { key: own.key, body: { clientId: 'pg-3' } })).status).toBe(
      202,
    );
    await waitFor(async () => (await gw.request('GET', `/api/v1/records/${gone}`, { key: own.key })).status === 404, {
      timeoutMs: 60000,
      what: 'the record to be deleted',
    });
    const list = (query: string) => gw.request('GET', `/api/v1/${query}`, { key: own.key });
    const refused = async (query: string, param: string) => {
      const reply = await list(query);
      expect({ query, status: reply.status }).toEqual({ query, status: 400 });
      expect(reply.body.error).toMatchObject({ code: 'validation_error', details: [{ path: [param] }] });
    };

    const ids = (reply: { body: { data: unknown } }) => (reply.body.data as Array<{ id: string }>).map((r) => r.id);
    // Items of the list page; so do the tenant's items the filters leave out (a record of another entity, one deleted
    // since): they mark the place in the list's order, as after acting on a page's items.
    expect(ids(await list(`records?entity=pager&limit=1&starting_after=${pagers[0]}`))).toEqual([pagers[1]]);
    expect(ids(await list(`records?entity=pager&limit=2&starting_after=${post}`))).toEqual([]);
    expect(ids(await list(`records?entity=pager&limit=2&ending_before=${post}`))).toEqual(pagers);
    expect(ids(await list(`records?entity=pager&limit=2&ending_before=${gone}`))).toEqual(pagers);
    for (const cursor of [foreign, 'rec_nope']) {
      await refused(`records?entity=pager&limit=2&starting_after=${cursor}`, 'starting_after');
      await refused(`records?entity=pager&limit=2&ending_before=${cursor}`, 'ending_before');
    }

    const suspendedUser = userIdFor(own.tenantId, 'suspended');
    const keptUser = userIdFor(own.tenantId, 'kept');
    await gw.request('POST', `/api/v1/users/${suspendedUser}/status`, {
      key: own.key,
      body: { status: 'Suspended', reason: 'x' },
    });
    expect((await list(`users?status=Suspended&starting_after=${suspendedUser}`)).status).toBe(200);
    expect((await list(`users?status=Suspended&starting_after=${keptUser}`)).status).toBe(200);
    await refused(`users?starting_after=usr_nope`, 'starting_after');
    await refused(`users?ending_before=usr_nope`, 'ending_before');

    const appeal = await gw.request('POST', `/api/v1/users/${suspendedUser}/appeals`, {
      key: own.key,
      body: { text: 'please' },
    });
    expect(appeal.status).toBe(201);
    expect((await list(`appeals?status=Open&starting_after=${appeal.body.data.id}`)).status).toBe(200);
    expect((await list(`appeals?status=Approved&starting_after=${appeal.body.data.id}`)).status).toBe(200);
    await refused(`appeals?user=${suspendedUser}&starting_after=apl_nope`, 'starting_after');
  });

  it('refuses an appeals user filter that is not a user of the tenant, as records do', async () => {
    const foreignUser = userIdFor(other.tenantId, 'u-foreign');
    await gw.request('POST', '/api/v1/moderate', {
      key: other.key,
      body: { ...postBody('fu-1'), user: { clientId: 'u-foreign' } },
    });
    for (const path of ['records', 'appeals']) {
      for (const user of ['usr_nope', foreignUser]) {
        const reply = await gw.request('GET', `/api/v1/${path}?user=${user}`, { key: tenant.key });
        expect({ path, user, status: reply.status }).toEqual({ path, user, status: 400 });
        expect(reply.body.error).toMatchObject({
          code: 'validation_error',
          message: 'invalid user id',
          details: [{ path: ['user'] }],
        });
      }
    }
    const known = userIdFor(tenant.tenantId, 'u-1');
    expect((await gw.request('GET', `/api/v1/appeals?user=${known}`, { key: tenant.key })).status).toBe(200);
  });

  it("answers 404 not_found, every time, for the statements of an unknown user or another tenant's", async () => {
    const foreignUser = userIdFor(other.tenantId, 'u-foreign-sor');
    await gw.request('POST', '/api/v1/moderate', {
      key: other.key,
      body: { ...postBody('fu-sor'), user: { clientId: 'u-foreign-sor' } },
    });
    // The user's events and records are read at once: the answer must not depend on which read fails first.
    for (let round = 0; round < 20; round += 1) {
      for (const user of ['usr_nope', foreignUser]) {
        const reply = await gw.request('GET', `/api/v1/users/${user}/statements`, { key: tenant.key });
        expect({ round, user, status: reply.status, code: reply.body.error?.code }).toEqual({
          round,
          user,
          status: 404,
          code: 'not_found',
        });
      }
    }
    const own = await gw.request('GET', `/api/v1/users/${foreignUser}/statements`, { key: other.key });
    expect(own.status).toBe(200);
  });

  it('answers 504 timeout when the moderator misses the deadline', async () => {
    // A channel without a connection yet answers 503 at once (the call's 1 ms is too short to connect): a call with
    // the default deadline connects it first.
    await waitFor(async () => (await impatient.request('GET', '/api/v1/users', { key: tenant.key })).status === 200, {
      what: 'the impatient gateway connected to the moderator',
    });
    const reply = await impatient.request('POST', '/api/v1/moderate', {
      key: tenant.key,
      body: { clientId: 'slow', name: 'n', entity: 'e', content: 'text' },
    });
    expect(reply.status).toBe(504);
    expect(reply.body.error.code).toBe('timeout');
  });

  it('answers 503 unavailable, without the token in any log, when the moderator refuses the gateway token', async () => {
    const reply = await mistrusted.request('POST', '/api/v1/moderate', {
      key: tenant.key,
      body: { clientId: 'x-1', name: 'n', entity: 'e', content: 'text' },
    });
    expect(reply.status).toBe(503);
    expect(reply.body.error.code).toBe('unavailable');
    expect((await mistrusted.request('GET', '/api/v1/users', { key: tenant.key })).status).toBe(503);
    expect(mistrusted.logText()).not.toContain(WRONG_TOKEN);
    expect(stack.moderator.output()).not.toContain(WRONG_TOKEN);
  });

  it("answers 403 forbidden when the moderator does not know the key's tenant", async () => {
    const orphan = await gw.newTenant();
    await gw.db.collection('tenants').deleteOne({ _id: orphan.tenantId } as never);
    const reply = await gw.request('POST', '/api/v1/moderate', {
      key: orphan.key,
      body: { clientId: 'o-1', name: 'n', entity: 'e', content: 'text' },
    });
    expect(reply.status).toBe(403);
    expect(reply.body.error.code).toBe('forbidden');
    expect((await gw.request('GET', '/api/v1/records', { key: orphan.key })).status).toBe(403);
  });
});
