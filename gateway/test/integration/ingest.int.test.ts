import { Command, recordIdFor, userIdFor } from '@vigil/proto';
import { closedPort, startGateway, type Gateway } from './harness';

let gw: Gateway;
let tenant: { tenantId: string; key: string };

beforeAll(async () => {
  gw = await startGateway();
  tenant = await gw.newTenant();
});
afterAll(async () => {
  await gw.close();
});

const header = (value: Buffer | string | (Buffer | string)[] | undefined) =>
  value === undefined ? undefined : String(value);

describe('ingest', () => {
  it('produces exactly the commands on the ingest topic, keyed and headed, and answers 202 after the ack', async () => {
    const record = {
      clientId: 'post-1',
      name: 'A post',
      entity: 'post',
      content: { text: 'hello', imageUrls: ['https://img.example/a.png'] },
      metadata: { lang: 'en', score: 3 },
      user: { clientId: 'user-1', username: 'ann', stripeAccountId: 'acct_1' },
    };
    const ingest = await gw.request('POST', '/api/v1/ingest', { key: tenant.key, body: record });
    expect(ingest.status).toBe(202);
    expect(ingest.body).toEqual({
      message: 'Accepted',
      id: recordIdFor(tenant.tenantId, 'post-1'),
      moderation: expect.stringMatching(/^mod_/),
      user: userIdFor(tenant.tenantId, 'user-1'),
    });
    // No moderator behind this gateway: whether the record exists cannot be asked, so nothing is produced.
    const removal = await gw.request('DELETE', '/api/v1/ingest', { key: tenant.key, body: { clientId: 'post-1' } });
    expect(removal.status).toBe(503);
    expect(removal.body.error.code).toBe('unavailable');
    const user = await gw.request('POST', '/api/v1/ingest/user', {
      key: tenant.key,
      body: { clientId: 'user-2', email: 'b@example.com', protected: true },
    });
    expect(user.status).toBe(202);
    expect(user.body).toEqual({ message: 'Accepted', id: userIdFor(tenant.tenantId, 'user-2') });

    const messages = await gw.readTopic(gw.topics.ingest, 2);
    expect(messages).toHaveLength(2);
    const commands = messages.map((message) => Command.parse(JSON.parse(String(message.value))));
    const byType = Object.fromEntries(commands.map((command, i) => [command.type, { command, message: messages[i]! }]));

    const ingested = byType.IngestRecord!;
    expect(String(ingested.message.key)).toBe(`${tenant.tenantId}:post-1`);
    expect(header(ingested.message.headers?.['event-id'])).toBe(ingested.command.id);
    expect(header(ingested.message.headers?.['event-type'])).toBe('IngestRecord');
    expect(ingested.command.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(ingested.command).toMatchObject({
      tenantId: tenant.tenantId,
      moderationId: ingest.body.moderation,
      data: {
        clientId: 'post-1',
        name: 'A post',
        entity: 'post',
        content: { text: 'hello', imageUrls: ['https://img.example/a.png'], externalUrls: [] },
        metadata: { lang: 'en', score: 3 },
        user: { clientId: 'user-1', username: 'ann', paymentsAccountId: 'acct_1' },
      },
    });
    expect(byType.DeleteRecord).toBeUndefined();
    expect(byType.IngestUser!.command.data).toEqual({ clientId: 'user-2', email: 'b@example.com', protected: true });
  });

  it('accepts many concurrent ingests and stores each one', async () => {
    const other = await gw.newTenant();
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        gw.request('POST', '/api/v1/ingest', {
          key: other.key,
          body: { clientId: `bulk-${i}`, name: 'n', entity: 'e', content: { text: `t${i}` } },
        }),
      ),
    );
    expect(replies.every((reply) => reply.status === 202)).toBe(true);
    const messages = await gw.readTopic(gw.topics.ingest, 52);
    const ids = messages
      .map((message) => Command.parse(JSON.parse(String(message.value))))
      .filter((command) => command.tenantId === other.tenantId)
      .map((command) => (command.type === 'IngestRecord' ? command.data.clientId : ''));
    expect(new Set(ids).size).toBe(50);
  });
});

describe('ingest with Kafka unreachable', () => {
  let down: Gateway;
  beforeAll(async () => {
    down = await startGateway({ kafkaBrokers: [`127.0.0.1:${await closedPort()}`], kafkaSendTimeoutMs: 3000 });
  });
  afterAll(async () => {
    await down.close();
  });

  it('answers 503 unavailable quickly and never a 2xx', async () => {
    const { key } = await down.newTenant();
    const started = Date.now();
    const replies = await Promise.all(
      ['a', 'b', 'c'].map((clientId) =>
        down.request('POST', '/api/v1/ingest', {
          key,
          body: { clientId, name: 'n', entity: 'e', content: { text: 'x' } },
        }),
      ),
    );
    expect(Date.now() - started).toBeLessThan(5000);
    expect(replies.map((reply) => reply.status)).toEqual([503, 503, 503]);
    expect(replies[0]!.body.error.code).toBe('unavailable');
    const user = await down.request('POST', '/api/v1/ingest/user', { key, body: { clientId: 'u' } });
    expect(user.status).toBe(503);
  });
});
