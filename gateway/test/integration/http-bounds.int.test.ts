import { LIMITS } from '@vigil/proto';
import { sampleRecord, startEdgeGateway, type Gateway } from './harness';

// Every input has a bound, enforced with 400 validation_error naming the field and published in the OpenAPI document.
let gw: Gateway;
let key: string;

beforeAll(async () => ({ gw, key } = await startEdgeGateway()));
afterAll(() => gw.close());
/** A string `levels` levels below the value returned (0: the string itself). */
const nested = (levels: number): unknown => (levels === 0 ? 'x' : { d: nested(levels - 1) });

describe('input bounds', () => {
  it.each([
    ['POST', '/api/v1/ingest', { ...sampleRecord, clientId: 'c'.repeat(257) }, 'clientId'],
    ['DELETE', '/api/v1/ingest', { clientId: 'c'.repeat(257) }, 'clientId'],
    ['POST', '/api/v1/ingest/user', { clientId: 'u', email: 'e'.repeat(321) }, 'email'],
    ['POST', '/api/v1/moderate', { ...sampleRecord, entity: 'e'.repeat(101) }, 'entity'],
    ['POST', '/api/v1/moderate', { ...sampleRecord, metadata: { 'a.b': 1 } }, 'metadata.a.b'],
    ['POST', '/api/v1/moderate', { ...sampleRecord, metadata: { $where: 1 } }, 'metadata.$where'],
    ['POST', '/api/v1/moderate', { ...sampleRecord, metadata: { a: nested(LIMITS.metadataDepth) } }, 'metadata.a'],
    [
      'POST',
      '/api/v1/ingest/user',
      { clientId: 'u', metadata: { a: [nested(LIMITS.metadataDepth - 1)] } },
      'metadata.a',
    ],
    [
      'POST',
      '/api/v1/moderate',
      { ...sampleRecord, user: { clientId: 'u', metadata: { a: nested(LIMITS.metadataDepth) } } },
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
