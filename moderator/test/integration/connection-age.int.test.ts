import * as grpc from '@grpc/grpc-js';
import { waitFor } from '../../../deploy/test-support';
import { content, startHarness, type Harness } from './harness';

// A gateway's channel finds new moderator pods only when it resolves the target again, which grpc-js does when a
// connection ends: the moderator ends each connection once it is GRPC_MAX_CONNECTION_AGE_MS old.
let h: Harness;
beforeAll(async () => {
  // Three seconds: the first call must finish on a young connection, and it took up to 1.7 s on a busy 2-core machine.
  h = await startHarness({ INGEST_CONSUMER_ENABLED: false, GRPC_MAX_CONNECTION_AGE_MS: 3000 });
});
afterAll(async () => {
  await h.close();
});

it('closes a client connection once it is GRPC_MAX_CONNECTION_AGE_MS old, and the client connects again', async () => {
  const tenantId = await h.newTenant();
  const moderate = () =>
    h.call('moderate', {
      tenantId,
      clientId: 'age-1',
      name: 'n',
      entity: 'post',
      content: content('hello'),
      passthrough: true,
    });
  await moderate();
  const channel = h.client.getChannel();
  expect(channel.getConnectivityState(false)).toBe(grpc.connectivityState.READY);
  await waitFor(() => channel.getConnectivityState(false) !== grpc.connectivityState.READY, {
    timeoutMs: 15000,
    what: 'the moderator to end the aged connection',
  });
  await expect(moderate()).resolves.toBeDefined();
});
