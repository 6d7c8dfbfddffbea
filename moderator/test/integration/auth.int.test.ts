import * as grpc from '@grpc/grpc-js';
import { COLLECTIONS } from '@vigil/proto';
import { service as healthService } from 'grpc-health-check';
import { uniqueName } from '../../../deploy/test-support';
import { content, startHarness, type Harness } from './harness';

// The gRPC port is reachable by anything that can open a connection to it: every ModerationService call must carry
// the shared token, and name a tenant that exists.
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ INGEST_CONSUMER_ENABLED: false });
});
afterAll(async () => {
  await h.close();
});

function bearer(value: string): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set('authorization', value);
  return metadata;
}

const moderateRequest = (tenantId: string) => ({
  tenantId,
  clientId: 'auth-1',
  name: 'n',
  entity: 'post',
  content: content('hello'),
});

async function refusal(promise: Promise<unknown>): Promise<grpc.ServiceError> {
  try {
    await promise;
  } catch (err) {
    return err as grpc.ServiceError;
  }
  throw new Error('the call succeeded');
}

describe('moderator gRPC authentication', () => {
  it.each([
    ['no credentials', new grpc.Metadata()],
    ['a wrong token', bearer(`Bearer ${'0'.repeat(64)}`)],
    ['the token under another scheme', bearer('Basic dXNlcjpwYXNz')],
  ])('answers UNAUTHENTICATED to a call with %s, before reading or writing anything', async (_what, metadata) => {
    const tenantId = await h.newTenant();
    const err = await refusal(h.call('Moderate', moderateRequest(tenantId), metadata));
    expect(err.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(err.metadata.get('vigil-error-code')).toEqual(['unauthenticated']);
    const readErr = await refusal(h.call('ListUsers', { tenantId }, metadata));
    expect(readErr.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(await h.db.collection(COLLECTIONS.events).countDocuments({ tenantId })).toBe(0);
  });

  it('answers UNAUTHENTICATED to the right token with a character changed, and never logs what was sent', async () => {
    const tenantId = await h.newTenant();
    const altered = `${h.token.slice(0, -1)}${h.token.endsWith('a') ? 'b' : 'a'}`;
    const err = await refusal(h.call('GetUser', { tenantId, userId: 'usr_x' }, bearer(`Bearer ${altered}`)));
    expect(err.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(h.logText()).not.toContain(altered);
    expect(h.logText()).not.toContain(h.token);
  });

  it('answers PERMISSION_DENIED (unknown_tenant) to the right token naming a tenant that does not exist', async () => {
    const tenantId = `ten_${uniqueName('ghost')}`;
    const err = await refusal(h.call('Moderate', moderateRequest(tenantId)));
    expect(err.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(err.metadata.get('vigil-error-code')).toEqual(['unknown_tenant']);
    expect((await refusal(h.call('ListRecords', { tenantId }))).code).toBe(grpc.status.PERMISSION_DENIED);
    expect(await h.db.collection(COLLECTIONS.events).countDocuments({ tenantId })).toBe(0);
  });

  it('serves a known tenant with the right token', async () => {
    const tenantId = await h.newTenant();
    const res = await h.call<unknown, { status: string }>('Moderate', moderateRequest(tenantId));
    expect(res.status).toBe('Compliant');
  });

  it('leaves grpc.health.v1 open for probes, without a token', async () => {
    const Health = grpc.makeGenericClientConstructor(healthService, 'Health');
    // A generic client has one method per RPC of the definition, untyped.
    const client = new Health(
      `127.0.0.1:${h.moderator.grpcPort}`,
      grpc.credentials.createInsecure(),
    ) as unknown as grpc.Client & {
      Check(request: unknown, options: grpc.CallOptions, callback: grpc.requestCallback<unknown>): void;
    };
    try {
      const status = await new Promise<unknown>((resolve, reject) =>
        client.Check(
          { service: 'vigil.moderation.v1.ModerationService' },
          { deadline: Date.now() + 5000 },
          (err, value) => (err ? reject(err) : resolve(value)),
        ),
      );
      expect(status).toEqual({ status: 'SERVING' });
    } finally {
      client.close();
    }
  });
});
