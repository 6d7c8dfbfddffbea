import { gzipSync } from 'node:zlib';
import { LIMITS } from '@vigil/proto';
import { sampleRecord, startEdgeGateway, type Gateway } from './harness';

// What the gateway takes as a request body and as text: JSON only, UTF-8 only, bounded in size and depth, no repeated
// or __proto__ keys, no NUL or lone surrogate, no number out of range, percent-escapes that decode as UTF-8.
let gw: Gateway;
let key: string;

beforeAll(async () => ({ gw, key } = await startEdgeGateway()));
afterAll(() => gw.close());

describe('request bodies and text', () => {
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

  it.each([['latin1'], ['ISO-8859-1'], ['utf-16']])(
    'returns 415 unsupported_media_type for a JSON body in charset %s',
    async (charset) => {
      const reply = await gw.request('POST', '/api/v1/moderate', {
        key,
        body: sampleRecord,
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
      body: { ...sampleRecord, content: { text: 'x'.repeat(4096) } },
    });
    expect(reply.status).toBe(413);
    expect(reply.body.error.code).toBe('payload_too_large');
  });
});
