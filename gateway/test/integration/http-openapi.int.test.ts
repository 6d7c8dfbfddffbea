import { sampleRecord, startEdgeGateway, type Gateway } from './harness';

// The OpenAPI document: served without a key, generated from the schemas the routes enforce.
let gw: Gateway;
let key: string;

beforeAll(async () => ({ gw, key } = await startEdgeGateway()));
afterAll(() => gw.close());

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
        'post /api/v1/backtests',
        'get /api/v1/backtests',
        'get /api/v1/backtests/{id}',
        'post /api/v1/backtests/{id}/cancel',
        'post /api/v1/backtests/{id}/apply',
        'get /api/v1/retroactions',
        'get /api/v1/retroactions/{id}',
        'post /api/v1/retroactions/{id}/cancel',
        'get /api/v1/rules/shadow',
        'put /api/v1/rules/shadow',
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
        'post /api/v1/reports/{id}/complaint',
        'post /api/v1/reports/{id}/complaint/decision',
        'get /api/v1/reports/{id}/statements',
        'get /api/v1/rules',
        'get /api/v1/rules/precision',
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
        'get /api/v1/policies',
        'post /api/v1/policies',
        'get /api/v1/policies/{id}',
        'patch /api/v1/policies/{id}',
        'delete /api/v1/policies/{id}',
        'get /api/v1/records/{id}/statements',
        'get /api/v1/users/{id}/statements',
        'get /api/v1/settings/transparency-database',
        'put /api/v1/settings/transparency-database',
        'delete /api/v1/settings/transparency-database',
        'get /api/v1/transparency-database/submissions',
        'get /api/v1/transparency-report',
        'post /api/v1/webhook-endpoints',
        'get /api/v1/webhook-endpoints',
        'get /api/v1/webhook-endpoints/{id}',
        'patch /api/v1/webhook-endpoints/{id}',
        'delete /api/v1/webhook-endpoints/{id}',
        'post /api/v1/webhook-endpoints/{id}/rotate-secret',
        'get /api/v1/webhook-endpoints/{id}/deliveries',
        'post /api/v1/deliveries/{id}/retry',
        'post /api/v1/webhook-endpoints/{id}/replay',
        'get /api/v1/hash-banks',
        'post /api/v1/hash-banks',
        'get /api/v1/hash-banks/{id}',
        'patch /api/v1/hash-banks/{id}',
        'delete /api/v1/hash-banks/{id}',
        'get /api/v1/hash-banks/{id}/hashes',
        'post /api/v1/hash-banks/{id}/hashes',
        'post /api/v1/hash-banks/{id}/hashes/import',
        'patch /api/v1/hash-banks/{id}/hashes/{hashId}',
        'delete /api/v1/hash-banks/{id}/hashes/{hashId}',
        'post /api/v1/hashes/lookup',
        'get /api/v1/hash-quarantines',
        'post /api/v1/hash-quarantines/{hashId}/release',
        'post /api/v1/hash-quarantines/{hashId}/dismiss',
        'get /api/v1/hash-banks/{id}/feeds',
        'post /api/v1/hash-banks/{id}/feeds',
        'patch /api/v1/hash-banks/{id}/feeds/{feedId}',
        'delete /api/v1/hash-banks/{id}/feeds/{feedId}',
        'post /api/v1/hash-banks/{id}/feeds/{feedId}/run',
        'get /openapi.json',
      ].sort(),
    );
    const moderate = paths['/api/v1/moderate']!.post as {
      requestBody: { content: { 'application/json': { schema: { required: string[]; properties: object } } } };
    };
    // A retroaction's refusals: stable codes in the error schema, each named by the route that answers it.
    const apply = paths['/api/v1/backtests/{id}/apply']!.post as {
      summary: string;
      responses: { default: { content: { 'application/json': { schema: unknown } } } };
    };
    const codes = JSON.stringify(apply.responses.default.content['application/json'].schema);
    for (const code of ['backtest_not_finished', 'backtest_expired', 'version_not_live', 'retroaction_running']) {
      expect(codes).toContain(`"${code}"`);
      expect(apply.summary).toContain(code);
    }
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
    const bare = { clientId: sampleRecord.clientId, name: sampleRecord.name, entity: sampleRecord.entity };
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
