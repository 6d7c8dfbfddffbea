import http from 'node:http';
import { sampleRecord, startEdgeGateway, type Gateway } from './harness';

// Authentication in front of the API: which requests are refused before any routing or body read.
let gw: Gateway;
let key: string;

beforeAll(async () => ({ gw, key } = await startEdgeGateway()));
afterAll(() => gw.close());

describe('authentication', () => {
  it.each([
    ['no Authorization header', undefined],
    ['a non-Bearer scheme', 'Basic abc'],
    ['an empty Bearer', 'Bearer '],
    ['a malformed key', 'Bearer vgl_nothex'],
    ['an unknown key', `Bearer vgl_${'0'.repeat(64)}`],
  ])('returns 401 unauthorized for %s', async (_name, authorization) => {
    const reply = await gw.request('POST', '/api/v1/moderate', {
      body: sampleRecord,
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
