import http from 'node:http';
import fc from 'fast-check';
import { LIMITS } from '@vigil/proto';
import {
  grpcAddressOf,
  loggedPort,
  spawnModerator,
  spawnNotifier,
  uniqueName,
  waitFor,
  type ServiceProcess,
} from '../../../deploy/test-support';
import { startGateway, type Gateway } from './harness';

/**
 * Property-based abuse of every route the OpenAPI document lists: generated valid and invalid bodies, headers, path
 * parameters and query strings, against the gateway with the real moderator, Kafka and store behind it. Whatever
 * arrives, the answer is never a 5xx, every 4xx is the error envelope, and no request takes longer than
 * SLOW_MS (generous for a busy 2-core machine: the work per request is small). The moderator's ingest consumer and a
 * notifier run behind it, and afterwards another tenant's ingest still reaches its webhook receiver.
 */
const SLOW_MS = 5000;
/** Runs per route and kind of input; the suite sends about 30 × 4 × RUNS requests. */
const RUNS = 15;
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() % 2 ** 31;

interface Operation {
  method: string;
  path: string;
  body?: JsonSchema;
  query: string[];
}

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  minimum?: number;
  maximum?: number;
  $ref?: string;
}

interface Reply {
  /** 0 when the gateway closed the connection while the body was still being sent. */
  status: number;
  body: string;
  elapsedMs: number;
}

let moderator: ServiceProcess;
let notifier: ServiceProcess;
let gw: Gateway;
let receiver: http.Server;
const received: string[] = [];
let key: string;
let operations: Operation[];

beforeAll(async () => {
  const stack = { dbName: uniqueName('abuse'), topicPrefix: `${uniqueName('t')}.` };
  moderator = spawnModerator(stack);
  notifier = spawnNotifier(stack);
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const moderatorAddress = await grpcAddressOf(moderator);
  await loggedPort(notifier, 'admin server listening');
  // The production body limit, so that oversized fields reach the schemas rather than the body parser.
  gw = await startGateway({
    moderatorAddress,
    ...stack,
    bodyLimitBytes: 1024 * 1024,
  });
  ({ key } = await gw.newTenant());
  const doc = JSON.parse((await send('GET', '/openapi.json', {})).body) as {
    paths: Record<string, Record<string, OpenApiOperation>>;
  };
  operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      body: op.requestBody?.content['application/json']?.schema,
      query: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
    })),
  );
}, 60000);

afterAll(async () => {
  await gw?.close();
  await Promise.all([moderator?.stop(), notifier?.stop()]);
  await new Promise((resolve) => receiver?.close(resolve));
});

interface OpenApiOperation {
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
  parameters?: Array<{ in: string; name: string }>;
}

/** One request with the path sent byte for byte (fetch would normalise it), timed. */
function send(method: string, path: string, headers: Record<string, string>, body?: string | Buffer): Promise<Reply> {
  const url = new URL(gw.url);
  const started = performance.now();
  // Node's client frames a DELETE body only with an explicit length (it sends no chunked encoding for DELETE).
  const framed = body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) };
  return new Promise((resolve, reject) => {
    // A connection per request: one left half-read by an early refusal must not delay the next request.
    const options = { host: url.hostname, port: url.port, method, path, headers: framed, agent: false };
    const req = http.request(options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
          elapsedMs: performance.now() - started,
        }),
      );
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      // The gateway answers some requests (401, 413, 415) without reading their body and then closes the
      // connection, so a client still uploading may see the reset before the answer: a refusal, not a failure.
      if (body !== undefined && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) {
        resolve({ status: 0, body: '', elapsedMs: performance.now() - started });
      } else reject(err);
    });
    req.end(body);
  });
}

/** The properties every answer must have. */
function expectWellFormed(reply: Reply, what: string): void {
  const context = `${what} → ${reply.status} in ${Math.round(reply.elapsedMs)} ms: ${reply.body.slice(0, 300)}`;
  if (reply.status >= 500) {
    const logged = gw
      .logText()
      .split('\n')
      .filter((line) => line.includes('request failed'));
    throw new Error(`server error for ${context}\n${logged.slice(-1).join('').slice(0, 2000)}`);
  }
  if (reply.elapsedMs > SLOW_MS) throw new Error(`slow answer for ${context}`);
  if (reply.status === 0) return;
  if (reply.status >= 400) {
    let envelope: { error?: { code?: unknown; message?: unknown; requestId?: unknown } } | undefined;
    try {
      envelope = JSON.parse(reply.body) as typeof envelope;
    } catch {
      throw new Error(`non-JSON error for ${context}`);
    }
    const error = envelope?.error;
    if (typeof error?.code !== 'string' || typeof error.message !== 'string' || typeof error.requestId !== 'string') {
      throw new Error(`error without the envelope for ${context}`);
    }
  }
}

// ---- Arbitraries ----

const printable = fc.stringMatching(/^[\x20-\x7e]{0,64}$/);
const anyText = fc.string({ unit: 'binary', maxLength: 64 });

/** A value of the JSON Schema's shape (the subset zod emits), within its bounds as far as they are known. */
function fromSchema(schema: JsonSchema, depth = 0): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const union = schema.anyOf ?? schema.oneOf;
  if (union) return fc.oneof(...union.map((branch) => fromSchema(branch, depth)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string': {
      if (schema.format === 'uri') return fc.webUrl({ withQueryParameters: true });
      if (schema.format === 'date-time') return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
      if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern));
      const max = Math.min(schema.maxLength ?? 64, 64);
      return fc.string({ minLength: Math.min(schema.minLength ?? 0, max), maxLength: max });
    }
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000 });
    case 'number':
      return fc.double({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'array': {
      if (!schema.items || depth > 4) return fc.constant([]);
      const maxLength = Math.min(schema.maxItems ?? 3, 3);
      return fc.array(fromSchema(schema.items, depth + 1), {
        minLength: Math.min(schema.minItems ?? 0, maxLength),
        maxLength,
      });
    }
    case 'object': {
      if (!schema.properties || depth > 4)
        return fc.dictionary(printable, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 });
      const required = new Set(schema.required ?? []);
      const entries = Object.entries(schema.properties).map(
        ([name, inner]) =>
          [
            name,
            required.has(name)
              ? fromSchema(inner, depth + 1)
              : fc.option(fromSchema(inner, depth + 1), { nil: undefined }),
          ] as const,
      );
      return fc.record(Object.fromEntries(entries));
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** A schema-shaped body with one string field made far longer than any bound (up to 300,000 characters). */
const oversized = (valid: fc.Arbitrary<unknown>) =>
  fc.tuple(valid, fc.integer({ min: LIMITS.clientId + 1, max: 300_000 })).map(([value, length]) => {
    if (typeof value !== 'object' || value === null) return 'x'.repeat(length);
    const copy = { ...(value as Record<string, unknown>) };
    const field = Object.keys(copy).find((name) => typeof copy[name] === 'string') ?? 'clientId';
    copy[field] = 'é'.repeat(length);
    return copy;
  });

const segment = fc.oneof(
  fc.string({ maxLength: 40 }).map(encodeURIComponent),
  fc.constantFrom('..', '.', '%', '%zz', '%2e%2e', '%2F', ';x', '%00', 'rec_x', 'usr_x', 'we_x', 'x'.repeat(2000)),
);

const queryString = (known: string[]) =>
  fc
    .dictionary(fc.oneof(fc.constantFrom(...known, 'limit', 'x'), printable), fc.oneof(anyText, fc.constant('1')), {
      maxKeys: 4,
    })
    .map((params) => {
      const text = new URLSearchParams(params).toString();
      return text ? `?${text}` : '';
    });

const headersArb = fc.record({
  authorization: fc.oneof(
    { weight: 6, arbitrary: fc.constant('valid') },
    { weight: 1, arbitrary: fc.constant('none') },
    { weight: 1, arbitrary: printable.map((value) => `Bearer ${value}`) },
  ),
  contentType: fc.oneof(
    { weight: 6, arbitrary: fc.constant('application/json') },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'text/plain',
        'application/json; charset=utf-16',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        '',
      ),
    },
  ),
  contentEncoding: fc.oneof(
    { weight: 8, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'x-unknown') },
  ),
  requestId: fc.option(printable, { nil: undefined }),
});

type Headers = typeof headersArb extends fc.Arbitrary<infer T> ? T : never;

function headersFor(h: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  if (h.authorization === 'valid') out.authorization = `Bearer ${key}`;
  else if (h.authorization !== 'none') out.authorization = h.authorization;
  if (h.contentType) out['content-type'] = h.contentType;
  if (h.contentEncoding) out['content-encoding'] = h.contentEncoding;
  if (h.requestId !== undefined) out['x-request-id'] = h.requestId;
  return out;
}

const fillPath = (template: string, segments: string[]) => {
  let index = 0;
  return template.replace(/\{[^}]+\}/g, () => segments[index++] ?? 'x');
};

type BodyKind = 'valid' | 'oversized' | 'arbitrary';

async function drive(op: Operation, kind: BodyKind): Promise<void> {
  const bodyArb: fc.Arbitrary<string | Buffer | undefined> = !op.body
    ? fc.option(
        fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
        { nil: undefined },
      )
    : kind === 'valid'
      ? fromSchema(op.body).map((v) => JSON.stringify(v))
      : kind === 'oversized'
        ? oversized(fromSchema(op.body)).map((v) => JSON.stringify(v))
        : fc.oneof(
            fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
            anyText,
            fc.uint8Array({ maxLength: 256 }).map((bytes) => Buffer.from(bytes)),
          );
  await fc.assert(
    fc.asyncProperty(
      fc.array(segment, { minLength: 2, maxLength: 2 }),
      queryString(op.query),
      headersArb,
      bodyArb,
      async (segments, query, headers, body) => {
        const path = fillPath(op.path, segments) + query;
        const reply = await send(op.method, path, headersFor(headers), body);
        expectWellFormed(reply, `${op.method} ${path.slice(0, 200)} (${kind})`);
      },
    ),
    { numRuns: RUNS, seed: SEED, endOnFailure: true },
  );
}

describe(`abuse of every OpenAPI route (seed ${SEED}, FUZZ_SEED to replay)`, () => {
  it('finds the routes in the OpenAPI document', () => {
    expect(operations.length).toBeGreaterThan(20);
  });

  it.each<BodyKind>(['valid', 'oversized', 'arbitrary'])(
    'answers %s inputs on every route with no 5xx, the error envelope on 4xx, and quickly',
    async (kind) => {
      for (const op of operations) await drive(op, kind);
    },
    240000,
  );

  it('answers unknown paths, methods and spellings of the prefix in the same way', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'),
        fc.array(segment, { minLength: 0, maxLength: 4 }),
        fc.constantFrom('/api/v1/', '/API/V1/', '//api/v1/', '/api/v1//', '/%61pi/v1/', '/', '/api/'),
        headersArb,
        async (method, segments, prefix, headers) => {
          const path = prefix + segments.join('/');
          const reply = await send(method, path, headersFor(headers));
          if (method === 'HEAD') {
            expect(reply.status).toBeLessThan(500);
            return;
          }
          expectWellFormed(reply, `${method} ${path.slice(0, 200)}`);
        },
      ),
      { numRuns: 60, seed: SEED, endOnFailure: true },
    );
  }, 120000);

  it('answers a 1 MB clientId on ingest quickly (the Kafka key is never hashed at that length)', async () => {
    const clientId = 'k'.repeat(LIMITS.clientId * 3000);
    const reply = await send(
      'POST',
      '/api/v1/ingest',
      { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      JSON.stringify({ clientId, name: 'n', entity: 'post', content: { text: 't' } }),
    );
    expect([400, 413]).toContain(reply.status);
    expect(reply.elapsedMs).toBeLessThan(SLOW_MS);
  });

  it('answers a NUL character in a path id, a query or a body with a 4xx, never a 5xx', async () => {
    const auth = { authorization: `Bearer ${key}` };
    const json = { ...auth, 'content-type': 'application/json' };
    const cases: Array<[string, string, string | undefined, number]> = [
      ['GET', '/api/v1/records/%00', undefined, 400],
      ['GET', '/api/v1/users/usr_%00x', undefined, 400],
      ['GET', '/api/v1/records?clientId=%00', undefined, 400],
      [
        'POST',
        '/api/v1/moderate',
        JSON.stringify({ clientId: 'a\u0000b', name: 'n', entity: 'post', content: 'x' }),
        400,
      ],
      ['POST', '/api/v1/ingest', JSON.stringify({ clientId: 'c', name: 'n', entity: 'post', content: 'x\u0000' }), 400],
    ];
    for (const [method, path, body, status] of cases) {
      const reply = await send(method, path, body === undefined ? auth : json, body);
      expect({ method, path, status: reply.status }).toEqual({ method, path, status });
    }
  });

  it('answers lone surrogates, bytes that are not UTF-8, repeated and __proto__ keys, deep nesting and foreign charsets on every route with a body with their 4xx', async () => {
    const json = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const cases: Array<[string, Record<string, string>, string | Buffer, number, string, string | undefined]> = [
      ['a lone surrogate in a value', json, '{"k":"x\\ud800"}', 400, 'validation_error', 'k'],
      ['a lone surrogate in a nested value', json, '{"k":{"j":["\\udfff"]}}', 400, 'validation_error', 'k.j.0'],
      ['a repeated key', json, '{"k":1,"k":2}', 400, 'invalid_json', 'k'],
      ['a __proto__ key', json, '{"k":{"__proto__":{"x":1}}}', 400, 'invalid_json', 'k.__proto__'],
      [
        'bytes that are not UTF-8',
        json,
        Buffer.from('{"k":"\xed\xa0\x80\xff"}', 'latin1'),
        400,
        'invalid_json',
        undefined,
      ],
      ['a repeated nested key', json, '{"k":{"j":1,"\\u006a":2}}', 400, 'invalid_json', 'k.j'],
      [
        'ten thousand nested arrays',
        json,
        `{"k":${'['.repeat(10_000)}${']'.repeat(10_000)}}`,
        400,
        'invalid_json',
        undefined,
      ],
      [
        'ten thousand nested objects',
        json,
        `${'{"k":'.repeat(10_000)}1${'}'.repeat(10_000)}`,
        400,
        'invalid_json',
        undefined,
      ],
      [
        'a latin1 body',
        { ...json, 'content-type': 'application/json; charset=latin1' },
        '{}',
        415,
        'unsupported_media_type',
        undefined,
      ],
    ];
    const withBody = operations.filter((op) => op.body);
    expect(withBody.length).toBeGreaterThan(8);
    for (const op of withBody) {
      for (const [name, headers, body, status, code, path] of cases) {
        const reply = await send(op.method, fillPath(op.path, ['x', 'y']), headers, body);
        expectWellFormed(reply, `${op.method} ${op.path} (${name})`);
        const error = (JSON.parse(reply.body) as { error: { code: string; details?: Array<{ path: unknown[] }> } })
          .error;
        expect({ route: `${op.method} ${op.path}`, name, status: reply.status, code: error.code }).toEqual({
          route: `${op.method} ${op.path}`,
          name,
          status,
          code,
        });
        if (path !== undefined) expect(error.details?.map((issue) => issue.path.join('.'))).toEqual([path]);
      }
    }
    // Percent-escapes that are not UTF-8 (here a lone surrogate's encoding) are refused, naming the parameter.
    for (const [path, at] of [
      ['/api/v1/records?clientId=%ED%A0%80', 'query.clientId'],
      ['/api/v1/records/rec_%ED%A0%80', 'path.id'],
      ['/api/v1/users/%ED%B0%80', 'path.id'],
    ]) {
      const reply = await send('GET', path!, { authorization: `Bearer ${key}` });
      expectWellFormed(reply, `GET ${path}`);
      const error = (JSON.parse(reply.body) as { error: { code: string; details?: Array<{ path: unknown[] }> } }).error;
      expect({ path, status: reply.status, code: error.code, at: error.details?.map((d) => d.path.join('.')) }).toEqual(
        {
          path,
          status: 400,
          code: 'validation_error',
          at: [at],
        },
      );
    }
  });

  it('refuses every state-changing console and appeal page request from a foreign origin with 403', async () => {
    const own = new URL(gw.url).origin;
    const paths = [
      '/console/sign-in',
      '/console/sign-out',
      '/console/records/rec_x/moderation',
      '/console/users/usr_x/status',
      '/console/appeals/apl_x/decision',
      '/console/settings',
      '/console/rules',
      '/console/deliveries/dlv_x/retry',
      '/console/webhooks/we_x/replay',
      '/console/hash-banks',
      '/console/hash-banks/bnk_x/hashes',
      '/console/hash-banks/bnk_x/hashes/hsh_x/withdraw',
      '/appeal',
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...paths),
        fc.oneof(
          fc.webUrl().map((url) => new URL(url).origin),
          fc.constantFrom('null', `${own}.evil.example`, own.replace('127.0.0.1', 'localhost'), `${own}:1`),
        ),
        fc.constantFrom(undefined, 'cross-site', 'same-site'),
        printable,
        async (path, origin, site, form) => {
          fc.pre(origin !== own);
          const headers: Record<string, string> = {
            origin,
            'content-type': 'application/x-www-form-urlencoded',
            ...(site ? { 'sec-fetch-site': site } : {}),
          };
          const reply = await send('POST', path, headers, form);
          expect({ path, origin, site, status: reply.status }).toEqual({ path, origin, site, status: 403 });
        },
      ),
      { numRuns: 60, seed: SEED, endOnFailure: true },
    );
  });

  it('refuses a rule set over its budget, and judges a 100,000-character record under the heaviest one admitted', async () => {
    const json = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const patternRule = (id: string, count: number) => ({
      id,
      name: id,
      strategies: [{ type: 'patterns', patterns: Array.from({ length: count }, (_, i) => `[a-z]{1,240}${i}q`) }],
    });
    // The probe that froze the moderator: 10 rules × 200 patterns of 482 RE2 instructions each.
    const probe = { rules: Array.from({ length: 10 }, (_, r) => patternRule(`r${r}`, 200)) };
    const refused = await send('PUT', '/api/v1/rules', json, JSON.stringify(probe));
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('validation_error');
    expect(refused.body).toContain('its budget is 500');

    const words = Array.from({ length: 1000 }, (_, i) => `word${i}`);
    const heaviest = {
      rules: [
        patternRule('patterns', 20),
        { id: 'words', name: 'words', strategies: [{ type: 'blocklist', words, wholeWord: true, profanity: true }] },
      ],
    };
    const accepted = await send('PUT', '/api/v1/rules', json, JSON.stringify(heaviest));
    expect(accepted.status).toBe(200);
    // The moderator reads rules through a short cache: wait until a record is judged by the new set.
    const text = `word999 ${'a'.repeat(LIMITS.text - 8)}`;
    const moderated = await waitFor(
      async () => {
        const reply = await send(
          'POST',
          '/api/v1/moderate',
          json,
          JSON.stringify({ clientId: 'heavy', name: 'n', entity: 'post', content: { text } }),
        );
        expect(reply.status).toBe(200);
        return reply.body.includes('"words"') ? reply : undefined;
      },
      { what: 'a record judged by the heaviest rule set', timeoutMs: 30000 },
    );
    expect(moderated.elapsedMs).toBeLessThan(SLOW_MS);
  });

  it('keeps the pipeline delivering webhooks afterwards', async () => {
    const other = await gw.newTenant();
    const { port } = receiver.address() as { port: number };
    const endpoint = await gw.request('POST', '/api/v1/webhook-endpoints', {
      key: other.key,
      body: { url: `http://127.0.0.1:${port}/hook` },
    });
    expect(endpoint.status).toBe(201);
    const clientId = `after-abuse-${Date.now()}`;
    const ingest = await gw.request('POST', '/api/v1/ingest', {
      key: other.key,
      body: { clientId, name: 'After', entity: 'post', content: { text: 'you are a fucking idiot' } },
    });
    expect(ingest.status).toBe(202);
    const body = await waitFor(() => received.find((entry) => entry.includes(clientId)), {
      timeoutMs: 90_000,
      what: 'the webhook of a record ingested after the abuse',
    });
    expect(JSON.parse(body)).toMatchObject({ event: 'record.flagged', payload: { clientId } });
  }, 120_000);
});
