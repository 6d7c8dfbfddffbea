import { sampleRecord, startEdgeGateway, type Gateway } from './harness';

// The error envelope: validation issues with their paths, unknown fields, unknown routes and methods, an unreachable
// moderator, request ids.
let gw: Gateway;
let key: string;

beforeAll(async () => ({ gw, key } = await startEdgeGateway()));
afterAll(() => gw.close());

describe('errors', () => {
  it('returns 400 validation_error listing every issue with its path', async () => {
    const reply = await gw.request('POST', '/api/v1/moderate', {
      key,
      body: {
        clientId: '',
        entity: 'post',
        clientUrl: 'not a url',
        content: { text: 'x', imageUrls: ['nope'] },
        metadata: { 'a[b': 1 },
        user: { name: 'no client id' },
        colour: 'red',
      },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('validation_error');
    const paths = (reply.body.error.details as Array<{ path: string[] }>).map((issue) => issue.path.join('.')).sort();
    expect(paths).toEqual([
      'clientId',
      'clientUrl',
      'colour',
      'content.imageUrls.0',
      'metadata.a[b',
      'name',
      'user.clientId',
    ]);
  });

  it('returns 400 validation_error when metadata has 51 keys', async () => {
    const metadata = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i]));
    const reply = await gw.request('POST', '/api/v1/ingest', { key, body: { ...sampleRecord, metadata } });
    expect(reply.status).toBe(400);
    expect(reply.body.error.details).toEqual([expect.objectContaining({ path: ['metadata'] })]);
  });

  it('returns 400 validation_error listing unknown keys in a rule set', async () => {
    const reply = await gw.request('PUT', '/api/v1/rules', {
      key,
      body: { rules: [{ id: 'a', name: 'A', enabeld: false, strategies: [{ type: 'blocklist', word: ['x'] }] }] },
    });
    expect(reply.status).toBe(400);
    const paths = (reply.body.error.details as Array<{ path: string[] }>).map((issue) => issue.path.join('.')).sort();
    expect(paths).toEqual(['rules.0.enabeld', 'rules.0.strategies.0.word']);
  });

  it('returns 400 validation_error listing unknown keys in settings email templates, changing nothing', async () => {
    const before = await gw.request('GET', '/api/v1/settings', { key });
    const reply = await gw.request('PATCH', '/api/v1/settings', {
      key,
      body: { emails: { templates: { Suspended: { subject: 'S', heading: 'H', body: 'B', footer: 'x' } } } },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('validation_error');
    const paths = (reply.body.error.details as Array<{ path: string[] }>).map((issue) => issue.path.join('.'));
    expect(paths).toEqual(['emails.templates.Suspended.footer']);
    expect((await gw.request('GET', '/api/v1/settings', { key })).body).toEqual(before.body);
  });

  it('returns 404 not_found JSON for an unknown route', async () => {
    const reply = await gw.request('GET', '/api/v1/nothing-here', { key });
    expect(reply.status).toBe(404);
    expect(reply.body.error.code).toBe('not_found');
    expect((await gw.request('GET', '/elsewhere')).body.error.code).toBe('not_found');
  });

  it('returns 405 JSON for a wrong method on a known route', async () => {
    const reply = await gw.request('GET', '/api/v1/moderate', { key });
    expect(reply.status).toBe(405);
    expect(reply.body.error.code).toBe('method_not_allowed');
  });

  it('returns 503 unavailable when the moderator cannot be reached', async () => {
    const reply = await gw.request('POST', '/api/v1/moderate', { key, body: sampleRecord });
    expect(reply.status).toBe(503);
    expect(reply.body.error.code).toBe('unavailable');
  });

  it('echoes a given X-Request-Id and generates one otherwise', async () => {
    const given = await gw.request('GET', '/api/v1/rules', { key, headers: { 'x-request-id': 'req-123' } });
    expect(given.headers.get('x-request-id')).toBe('req-123');
    const generated = await gw.request('GET', '/api/v1/nothing', {});
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(generated.body.error.requestId).toBe(generated.headers.get('x-request-id'));
  });
});
