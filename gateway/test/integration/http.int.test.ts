import http from 'node:http';
import { gzipSync } from 'node:zlib';
import { LIMITS } from '@vigil/proto';
import { startGateway, type Gateway } from './harness';

let gw: Gateway;
let key: string;

beforeAll(async () => {
  gw = await startGateway({ bodyLimitBytes: 2048, rateLimitPoints: 0 });
  ({ key } = await gw.newTenant());
});
afterAll(async () => {
  await gw.close();
});

const record = { clientId: 'c1', name: 'Post', entity: 'post', content: { text: 'hello' } };
/** A string `levels` levels below the value returned (0: the string itself). */
const nested = (levels: number): unknown => (levels === 0 ? 'x' : { d: nested(levels - 1) });

describe('authentication', () => {
  it.each([
    ['no Authorization header', undefined],
    ['a non-Bearer scheme', 'Basic abc'],
    ['an empty Bearer', 'Bearer '],
    ['a malformed key', 'Bearer vgl_nothex'],
    ['an unknown key', `Bearer vgl_${'0'.repeat(64)}`],
  ])('returns 401 unauthorized for %s', async (_name, authorization) => {
    const reply = await gw.request('POST', '/api/v1/moderate', {
      body: record,
      headers: authorization === undefined ? {} : { authorization },
    });
    expect(reply.status).toBe(401);
    expect(reply.body.error).toMatchObject({ code: 'unauthorized', requestId: expect.any(String) });
  });

  it('returns 401 for a revoked key (new key, so nothing is cached)', async () => {
    const tenant = await gw.newTenant();
    expect(await gw.tenants.revokeKey(tenant.keyId)).toBe(true);
    const reply = await gw.request('GET', '/api/v1/rules', { key: tenant.key });
    expect(reply.status).toBe(401);
  });

  it('answers 401 before reading the body', async () => {
    const url = new URL(gw.url);
    // Announce a large body, send only its first bytes and keep the request open: the answer must come anyway.
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request({
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path: '/api/v1/ingest',
        headers: { 'content-type': 'application/json', 'content-length': String(10 * 1024 * 1024) },
      });
      req.on('response', (res) => {
        resolve(res.statusCode ?? 0);
        res.resume();
        req.destroy();
      });
      req.on('error', reject);
      req.write('{"clientId":');
    });
    expect(status).toBe(401);
  });

  it('closes the connection after answering a request whose body it did not read', async () => {
    const url = new URL(gw.url);
    const agent = new http.Agent({ keepAlive: true });
    try {
      // A body announced, partly sent and left open: without the close, the server would go on reading (and
      // discarding) all 10 MB on this connection to keep it alive.
      const closed = await new Promise<{ status: number; connection?: string }>((resolve, reject) => {
        const req = http.request({
          host: url.hostname,
          port: url.port,
          method: 'POST',
          path: '/api/v1/ingest',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': String(10 * 1024 * 1024) },
        });
        req.on('response', (res) => {
          res.resume();
          res.socket.once('close', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
        });
        req.on('error', reject);
        req.write('{"clientId":');
      });
      expect(closed).toEqual({ status: 401, connection: 'close' });

      // A refusal after the whole body was read keeps the connection.
      const kept = await new Promise<{ status: number; connection?: string }>((resolve, reject) => {
        const req = http.request(
          {
            host: url.hostname,
            port: url.port,
            method: 'POST',
            path: '/api/v1/ingest',
            agent,
            headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
          },
        );
        req.on('error', reject);
        req.end('{"clientId":');
      });
      expect(kept).toEqual({ status: 400, connection: 'keep-alive' });
    } finally {
      agent.destroy();
    }
  });

  it('also protects unknown paths below /api/v1', async () => {
    expect((await gw.request('GET', '/api/v1/nothing-here')).status).toBe(401);
  });
});

/** GET with the path sent byte for byte (fetch would resolve dot segments and re-encode). */
function rawGet(path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const url = new URL(gw.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method: 'GET', path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('route matching and authentication agree', () => {
  const variants = [
    '/API/V1/settings',
    '/Api/V1/Settings',
    '/api/v1/SETTINGS',
    '/api/v1/settings/',
    '//api/v1/settings',
    '/api//v1/settings',
    '/api/v1//settings',
    '/api/v1/%73ettings',
    '/%61pi/v1/settings',
    '/api%2Fv1/settings',
    '/api/v1/settings%2F',
    '/api/v1/./settings',
    '/api/v1/x/../settings',
    '/api/v1/settings;x',
    '/api/v1/%',
  ];

  it.each(variants)('GET %s without a key is 401 or 404 and reaches no handler', async (path) => {
    const reply = await rawGet(path);
    expect([401, 404]).toContain(reply.status);
    expect(JSON.parse(reply.body)).toMatchObject({
      error: { code: expect.stringMatching(/^(unauthorized|not_found)$/) },
    });
  });

  it.each(variants)('GET %s with a key is 404: only the exact path routes', async (path) => {
    const reply = await rawGet(path, { authorization: `Bearer ${key}` });
    expect(reply.status).toBe(404);
  });

  it('GET /api/v1/settings is 401 without a key and 200 with one', async () => {
    expect((await rawGet('/api/v1/settings')).status).toBe(401);
    expect((await rawGet('/api/v1/settings', { authorization: `Bearer ${key}` })).status).toBe(200);
  });
});

describe('input bounds', () => {
  it.each([
    ['POST', '/api/v1/ingest', { ...record, clientId: 'c'.repeat(257) }, 'clientId'],
    ['DELETE', '/api/v1/ingest', { clientId: 'c'.repeat(257) }, 'clientId'],
    ['POST', '/api/v1/ingest/user', { clientId: 'u', email: 'e'.repeat(321) }, 'email'],
    ['POST', '/api/v1/moderate', { ...record, entity: 'e'.repeat(101) }, 'entity'],
    ['POST', '/api/v1/moderate', { ...record, metadata: { 'a.b': 1 } }, 'metadata.a.b'],
    ['POST', '/api/v1/moderate', { ...record, metadata: { $where: 1 } }, 'metadata.$where'],
    ['POST', '/api/v1/moderate', { ...record, metadata: { a: nested(LIMITS.metadataDepth) } }, 'metadata.a'],
    [
      'POST',
      '/api/v1/ingest/user',
      { clientId: 'u', metadata: { a: [nested(LIMITS.metadataDepth - 1)] } },
      'metadata.a',
    ],
    [
      'POST',
      '/api/v1/moderate',
      { ...record, user: { clientId: 'u', metadata: { a: nested(LIMITS.metadataDepth) } } },
      'user.metadata.a',
    ],
    ['POST', '/api/v1/users/usr_x/appeals', { text: 't'.repeat(1001) }, 'text'],
    ['POST', '/api/v1/records/rec_x/moderations', { status: 'Flagged', reason: 'r'.repeat(2001) }, 'reason'],
    ['POST', '/api/v1/reports/rpt_x/decision', { outcome: 'NoAction', reason: 'r'.repeat(2001) }, 'reason'],
  ])('%s %s refuses an out-of-bound field with 400 validation_error naming %s', async (method, path, body, field) => {
    const reply = await gw.request(method, path, { key, body });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('validation_error');
    expect((reply.body.error.details as Array<{ path: unknown[] }>).map((d) => d.path.join('.'))).toContain(field);
  });

  it('refuses an over-long query filter with 400 naming it', async () => {
    const reply = await gw.request('GET', `/api/v1/records?clientId=${'c'.repeat(257)}`, { key });
    expect(reply.status).toBe(400);
    expect(reply.body.error.details).toEqual([expect.objectContaining({ path: ['clientId'] })]);
  });

  it('documents the bounds in the OpenAPI document', async () => {
    const doc = (await gw.request('GET', '/openapi.json')).body as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>>;
    };
    const ingest = doc.paths['/api/v1/ingest']!.post!.requestBody!.content['application/json']!.schema as {
      properties: Record<string, { maxLength?: number; properties?: Record<string, { maxLength?: number }> }>;
    };
    expect(ingest.properties.clientId!.maxLength).toBe(256);
    expect(ingest.properties.name!.maxLength).toBe(1000);
    expect(ingest.properties.content!.properties!.text!.maxLength).toBe(100_000);
  });
});

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
    const reply = await gw.request('POST', '/api/v1/ingest', { key, body: { ...record, metadata } });
    expect(reply.status).toBe(400);
    expect(reply.body.error.details).toEqual([expect.objectContaining({ path: ['metadata'] })]);
  });

  it('returns 400 invalid_json for a malformed body', async () => {
    const reply = await gw.request('POST', '/api/v1/moderate', { key, body: '{"clientId": ' });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('invalid_json');
  });

  it.each([
    ['clientId', '{"clientId":"x\\ud800","name":"n","entity":"post","content":"t"}', 'clientId'],
    ['clientId (low)', '{"clientId":"x\\udfff","name":"n","entity":"post","content":"t"}', 'clientId'],
    ['content', '{"clientId":"c","name":"n","entity":"post","content":{"text":"a\\udc00b"}}', 'content.text'],
    [
      'a user field',
      '{"clientId":"c","name":"n","entity":"post","content":"t","user":{"clientId":"\\ud83d"}}',
      'user.clientId',
    ],
    [
      'a metadata value',
      '{"clientId":"c","name":"n","entity":"post","content":"t","metadata":{"k":"\\ud800"}}',
      'metadata.k',
    ],
    [
      'a metadata key',
      '{"clientId":"c","name":"n","entity":"post","content":"t","metadata":{"\\ud800":1}}',
      'metadata',
    ],
  ])('returns 400 validation_error naming the field for a lone surrogate in %s', async (_name, body, path) => {
    const reply = await gw.request('POST', '/api/v1/moderate', { key, body });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('validation_error');
    const paths = (reply.body.error.details as Array<{ path: string[] }>).map((issue) => issue.path.join('.'));
    expect(paths).toEqual([path]);
  });

  it.each([
    [
      'POST',
      '/api/v1/moderate',
      (deep: string) => `{"clientId":"dp","name":"n","entity":"p","content":"x","metadata":{"a":${deep}}}`,
    ],
    ['PATCH', '/api/v1/settings', (deep: string) => `{"emails":{"templates":${deep}}}`],
    ['POST', '/api/v1/ingest/user', (deep: string) => `{"clientId":"u","metadata":{"a":${deep}}}`],
  ])('%s %s refuses a body nested too deeply with 400 invalid_json', async (method, path, bodyWith) => {
    const objects = (depth: number) => '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);
    // The body's own object and metadata are two levels: one more than the limit in all.
    const reply = await gw.request(method, path, { key, body: bodyWith(objects(LIMITS.jsonDepth - 1)) });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({
      code: 'invalid_json',
      message: `request body is nested too deeply: at most ${LIMITS.jsonDepth} levels of objects and arrays`,
    });
  });

  it.each([
    [
      'POST',
      '/api/v1/moderate',
      'metadata.a',
      '{"clientId":"c","name":"n","entity":"post","content":"t","metadata":{"a":1e400}}',
    ],
    [
      'POST',
      '/api/v1/ingest',
      'metadata.a.b.1',
      '{"clientId":"c","name":"n","entity":"post","content":"t","metadata":{"a":{"b":[1,-1e999]}}}',
    ],
    ['POST', '/api/v1/ingest/user', 'metadata.big', '{"clientId":"u","metadata":{"big":123e456}}'],
  ])(
    '%s %s refuses a number out of range in %s with 400 validation_error (not stored as null)',
    async (method, path, field, body) => {
      const reply = await gw.request(method, path, { key, body });
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe('validation_error');
      const paths = (reply.body.error.details as Array<{ path: string[] }>).map((issue) => issue.path.join('.'));
      expect(paths).toEqual([field]);
    },
  );

  it.each([
    ['/api/v1/records?clientId=%ED%A0%80', ['query', 'clientId']],
    ['/api/v1/records?limit=5&user=usr_%FF', ['query', 'user']],
    ['/api/v1/records/rec_%ED%A0%80', ['path', 'id']],
    ['/api/v1/users/%ED%B0%80/emails', ['path', 'id']],
  ])(
    'GET %s: percent-encoded bytes that are not UTF-8 are 400 validation_error naming the parameter',
    async (path, at) => {
      const reply = await gw.request('GET', path, { key });
      expect(reply.status).toBe(400);
      expect(reply.body.error).toMatchObject({ code: 'validation_error', details: [{ path: at }] });
    },
  );

  it('takes percent-encoded UTF-8 in a query and a path', async () => {
    const id = encodeURIComponent('ünï😀');
    // Decoded and looked up: the cursor is refused as no endpoint of the tenant, not as bytes that are not UTF-8.
    const list = await gw.request('GET', `/api/v1/webhook-endpoints?starting_after=${id}`, { key });
    expect(list.body.error).toMatchObject({
      code: 'validation_error',
      details: [{ path: ['starting_after'], message: 'not a webhook endpoint of this tenant' }],
    });
    const one = await gw.request('GET', `/api/v1/webhook-endpoints/${id}`, { key });
    expect(one.body.error.code).toBe('not_found');
  });

  it('returns 400 invalid_json naming a key repeated in an object', async () => {
    const reply = await gw.request('POST', '/api/v1/moderate', {
      key,
      body: '{"clientId":"a","name":"n","entity":"post","content":"t","clientId":"b"}',
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({ code: 'invalid_json', details: [{ path: ['clientId'] }] });
  });

  it.each([
    [
      'a lone surrogate as UTF-8 bytes (ED A0 80)',
      '{"clientId":"utf8-bad","name":"ab\xed\xa0\x80cd","entity":"post","content":"x"}',
    ],
    ['a byte that is never UTF-8 (FF)', '{"clientId":"utf8-bad","name":"n","entity":"post","content":"x\xffy"}'],
    ['a truncated sequence (C3)', '{"clientId":"utf8-bad","name":"n","entity":"post","content":"x\xc3"}'],
    ['an overlong encoding of "/" (C0 AF)', '{"clientId":"utf8-bad","name":"n","entity":"post","content":"\xc0\xaf"}'],
  ])('returns 400 invalid_json for a body with %s, never reading it as U+FFFD', async (_name, latin1) => {
    const reply = await gw.request('POST', '/api/v1/moderate', { key, body: Buffer.from(latin1, 'latin1') });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({ code: 'invalid_json', message: 'request body is not valid UTF-8' });
  });

  it('reads a UTF-8 body with a byte order mark and multi-byte characters, and a gzip body', async () => {
    const rules = { rules: [{ id: 'u', name: 'Ünïcode é😀', strategies: [{ type: 'blocklist', words: ['ß'] }] }] };
    const text = JSON.stringify(rules);
    for (const [body, headers] of [
      [Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]), {}],
      [gzipSync(text), { 'content-encoding': 'gzip' }],
    ] as const) {
      const reply = await gw.request('PUT', '/api/v1/rules', { key, body, headers });
      expect(reply.status).toBe(200);
      expect((await gw.request('GET', '/api/v1/rules', { key })).body).toMatchObject(rules);
    }
    const broken = await gw.request('PUT', '/api/v1/rules', {
      key,
      body: text,
      headers: { 'content-encoding': 'gzip' },
    });
    expect(broken.body.error).toMatchObject({
      code: 'invalid_json',
      message: 'request body could not be decompressed',
    });
    await gw.request('PUT', '/api/v1/rules', { key, body: { rules: [] } });
  });

  it.each([
    ['at the top', '{"__proto__":{"x":1},"clientId":"c","name":"n","entity":"post","content":"t"}', ['__proto__']],
    ['escaped', '{"\\u005f_proto__":{"x":1},"clientId":"c","name":"n","entity":"post","content":"t"}', ['__proto__']],
    [
      'in metadata',
      '{"clientId":"c","name":"n","entity":"post","content":"t","metadata":{"__proto__":{"a":1}}}',
      ['metadata', '__proto__'],
    ],
  ])('returns 400 invalid_json naming a __proto__ key %s', async (_name, body, path) => {
    const reply = await gw.request('POST', '/api/v1/moderate', { key, body });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({ code: 'invalid_json', details: [{ path }] });
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

  it.each([['latin1'], ['ISO-8859-1'], ['utf-16']])(
    'returns 415 unsupported_media_type for a JSON body in charset %s',
    async (charset) => {
      const reply = await gw.request('POST', '/api/v1/moderate', {
        key,
        body: record,
        headers: { 'content-type': `application/json; charset=${charset}` },
      });
      expect(reply.status).toBe(415);
      expect(reply.body.error.code).toBe('unsupported_media_type');
    },
  );

  it('accepts a JSON body in charset utf-8, however spelt', async () => {
    for (const charset of ['utf-8', 'UTF-8', 'utf8']) {
      const reply = await gw.request('PUT', '/api/v1/rules', {
        key,
        body: { rules: [] },
        headers: { 'content-type': `application/json; charset=${charset}` },
      });
      expect(reply.status).toBe(200);
    }
  });

  it('returns 415 unsupported_media_type for a non-JSON body', async () => {
    const reply = await gw.request('POST', '/api/v1/moderate', {
      key,
      body: 'clientId=c1',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(reply.status).toBe(415);
    expect(reply.body.error.code).toBe('unsupported_media_type');
  });

  it('returns 413 payload_too_large above the body limit', async () => {
    const reply = await gw.request('POST', '/api/v1/moderate', {
      key,
      body: { ...record, content: { text: 'x'.repeat(4096) } },
    });
    expect(reply.status).toBe(413);
    expect(reply.body.error.code).toBe('payload_too_large');
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
    const reply = await gw.request('POST', '/api/v1/moderate', { key, body: record });
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

describe('openapi', () => {
  it('lists every route with its schemas, without authentication', async () => {
    const reply = await gw.request('GET', '/openapi.json');
    expect(reply.status).toBe(200);
    const paths = reply.body.paths as Record<string, Record<string, unknown>>;
    const operations = Object.entries(paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((m) => `${m} ${path}`),
    );
    expect(operations.sort()).toEqual(
      [
        'post /api/v1/moderate',
        'post /api/v1/records/moderations/rerun',
        'post /api/v1/ingest',
        'delete /api/v1/ingest',
        'post /api/v1/ingest/user',
        'get /api/v1/records',
        'get /api/v1/records/{id}',
        'get /api/v1/records/{id}/events',
        'post /api/v1/records/{id}/moderations',
        'get /api/v1/users',
        'get /api/v1/users/{id}',
        'get /api/v1/users/{id}/emails',
        'get /api/v1/users/{id}/payment-actions',
        'post /api/v1/users/{id}/status',
        'post /api/v1/users/{id}/appeals',
        'get /api/v1/appeals',
        'post /api/v1/appeals/{id}/decision',
        'post /api/v1/reports',
        'get /api/v1/reports',
        'get /api/v1/reports/{id}',
        'post /api/v1/reports/{id}/decision',
        'get /api/v1/rules',
        'put /api/v1/rules',
        'get /api/v1/rules/presets',
        'post /api/v1/rules/presets/{id}',
        'get /api/v1/rules/versions',
        'post /api/v1/rules/versions',
        'get /api/v1/rules/versions/{version}',
        'get /api/v1/rules/versions/{version}/diff',
        'post /api/v1/rules/versions/{version}/promote',
        'post /api/v1/rules/versions/{version}/rollback',
        'get /api/v1/settings',
        'patch /api/v1/settings',
        'post /api/v1/webhook-endpoints',
        'get /api/v1/webhook-endpoints',
        'get /api/v1/webhook-endpoints/{id}',
        'patch /api/v1/webhook-endpoints/{id}',
        'delete /api/v1/webhook-endpoints/{id}',
        'post /api/v1/webhook-endpoints/{id}/rotate-secret',
        'get /api/v1/webhook-endpoints/{id}/deliveries',
        'post /api/v1/deliveries/{id}/retry',
        'post /api/v1/webhook-endpoints/{id}/replay',
        'get /openapi.json',
      ].sort(),
    );
    const moderate = paths['/api/v1/moderate']!.post as {
      requestBody: { content: { 'application/json': { schema: { required: string[]; properties: object } } } };
    };
    const schema = moderate.requestBody.content['application/json'].schema;
    expect(schema.required).toEqual(expect.arrayContaining(['clientId', 'name', 'entity']));
    expect(Object.keys(schema.properties)).toEqual(
      expect.arrayContaining(['content', 'metadata', 'user', 'passthrough']),
    );
    // content is required, as the service answers 400 without it, unless Iffy's legacy `text` stands in for it.
    for (const path of ['/api/v1/moderate', '/api/v1/ingest']) {
      const body = (paths[path]!.post as typeof moderate).requestBody.content['application/json'].schema as {
        anyOf?: unknown;
        properties: Record<string, { description?: string; deprecated?: boolean }>;
      };
      expect({ path, anyOf: body.anyOf }).toEqual({
        path,
        anyOf: [{ required: ['content'] }, { required: ['text'] }],
      });
      expect(body.properties.content?.description).toMatch(/^Required/);
      expect(body.properties.text?.deprecated).toBe(true);
    }
  });

  it('refuses a record with neither content nor the legacy text, as its OpenAPI schema says', async () => {
    const bare = { clientId: record.clientId, name: record.name, entity: record.entity };
    for (const path of ['/api/v1/moderate', '/api/v1/ingest']) {
      const reply = await gw.request('POST', path, { key, body: bare });
      expect(reply.status).toBe(400);
      expect(reply.body.error).toMatchObject({
        code: 'validation_error',
        details: [{ path: ['content'], message: 'content is required' }],
      });
    }
  });
});

describe('rate limit', () => {
  let limited: Gateway;
  beforeAll(async () => {
    limited = await startGateway({ rateLimitPoints: 3, rateLimitWindowSeconds: 86400 });
  });
  afterAll(async () => {
    await limited.close();
  });

  it('returns 429 rate_limited with Retry-After once a key used its points, other keys unaffected', async () => {
    const first = await limited.newTenant();
    const second = await limited.newTenant();
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await limited.request('GET', '/api/v1/rules', { key: first.key })).status);
    expect(statuses).toEqual([200, 200, 200]);
    const refused = await limited.request('GET', '/api/v1/rules', { key: first.key });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('ratelimit-limit')).toBe('3');
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect((await limited.request('GET', '/api/v1/rules', { key: second.key })).status).toBe(200);
  });
});
