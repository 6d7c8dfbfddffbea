import { recordIdFor } from '@vigil/proto';
import { startModeratorStack, type Gateway, type ModeratorStack } from './harness';

// The `pii` strategy through POST /api/v1/moderate: the gateway in process, the moderator as a process (its engine
// workers included), Kafka and the MongoDB-wire store.
let stack: ModeratorStack;
let gw: Gateway;
let tenant: { tenantId: string; key: string };

const TEXT = "what's your snap? mine is snap: jenny_22, or call 212-555-0199";

const call = (method: string, path: string, body?: unknown) =>
  gw.request(method, `/api/v1${path}`, { key: tenant.key, ...(body === undefined ? {} : { body }) });

beforeAll(async () => {
  stack = await startModeratorStack({ name: 'gwpii', moderatorEnv: { TENANT_CONFIG_TTL_MS: '0' } });
  ({ gw } = stack);
  tenant = await gw.newTenant();
  const put = await call('PUT', '/rules', {
    rules: [{ id: 'contact', name: 'Contact details', strategies: [{ type: 'pii', mask: true }] }],
  });
  expect(put.status).toBe(200);
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

describe('contact details', () => {
  it('flags a record with each detail as a reason with its category and span, and answers the masked content', async () => {
    const reply = await call('POST', '/moderate', { clientId: 'c1', name: 'n', entity: 'message', content: TEXT });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      status: 'Flagged',
      rules: ['contact'],
      reasons: [
        'Content asks for contact details (asking): 0-16',
        'Content contains contact details (handle): 26-40',
        'Content contains contact details (phone): 50-62',
      ],
      maskedContent: "what's your snap? mine is [contact removed], or call [contact removed]",
    });
    expect(TEXT.slice(50, 62)).toBe('212-555-0199');
  });

  it('answers the masked content of a passthrough record but stores neither it nor the spans', async () => {
    const reply = await call('POST', '/moderate', {
      clientId: 'c2',
      name: 'n',
      entity: 'message',
      content: TEXT,
      passthrough: true,
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      status: 'Flagged',
      maskedContent: expect.stringContaining('[contact removed]'),
    });
    const record = await call('GET', `/records/${recordIdFor(tenant.tenantId, 'c2')}`);
    expect(record.status).toBe(200);
    const stored = JSON.stringify(record.body);
    expect(stored).not.toContain('[contact removed]');
    expect(stored).not.toContain('jenny_22');
    expect(stored).toContain('Content contains contact details (phone)');
    expect(stored).not.toContain('50-62');
  });

  it('answers no masked content when nothing was found, and logs no content', async () => {
    const reply = await call('POST', '/moderate', {
      clientId: 'c3',
      name: 'n',
      entity: 'message',
      content: 'hi there',
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ status: 'Compliant', reasons: [] });
    expect(reply.body).not.toHaveProperty('maskedContent');
    expect(stack.moderator.output()).not.toContain('jenny_22');
  });

  it('finds contact details in the name and metadata too, and masks the text alone', async () => {
    const reply = await call('POST', '/moderate', {
      clientId: 'c4',
      name: 'add me on snap: jenny_22',
      entity: 'message',
      content: 'hi there',
      metadata: { bio: 'mail me at jane.doe@example.com' },
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      status: 'Flagged',
      reasons: expect.arrayContaining([
        expect.stringMatching(/^Name contains contact details \(handle\): \d+-\d+$/),
        'Metadata contains contact details (email)',
      ]),
    });
    // The text has no detail to hide: no masked copy.
    expect(reply.body).not.toHaveProperty('maskedContent');
  });

  it('refuses an unknown category with 400 validation_error', async () => {
    const put = await call('PUT', '/rules', {
      rules: [{ id: 'contact', name: 'Contact', strategies: [{ type: 'pii', categories: ['fax'] }] }],
    });
    expect(put.status).toBe(400);
    expect(put.body).toMatchObject({ error: { code: 'validation_error' } });
  });
});
