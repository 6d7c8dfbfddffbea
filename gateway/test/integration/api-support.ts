import { uniqueName } from '../../../deploy/test-support';
import type { Gateway, Reply } from './harness';

/** A tenant as `Gateway.newTenant` returns it: its id and API key. */
export type Tenant = { tenantId: string; key: string };

/**
 * Calls `/api/v1<path>` as `tenant`, on the gateway `gw()` returns (read at each call, so a test file can make its
 * caller before its `beforeAll` starts the gateway).
 */
export const apiCaller =
  (gw: () => Gateway) =>
  (tenant: Tenant, method: string, path: string, body?: unknown): Promise<Reply> =>
    gw().request(method, `/api/v1${path}`, { key: tenant.key, ...(body === undefined ? {} : { body }) });

/** Moderates a text post as `tenant` through `call` (an `apiCaller`), expecting 200. */
export const moderateWith =
  (call: ReturnType<typeof apiCaller>) =>
  async (tenant: Tenant, clientId: string, text: string, extra: Record<string, unknown> = {}): Promise<void> => {
    const reply = await call(tenant, 'POST', '/moderate', {
      clientId,
      name: 'n',
      entity: 'post',
      content: text,
      ...extra,
    });
    expect(reply.status).toBe(200);
  };

/** An error reply's status and code, for one `toEqual`. */
export const errorOf = (reply: { status: number; body: unknown }) => [
  reply.status,
  (reply.body as { error?: { code?: string } }).error?.code,
];

/**
 * Moderates a fine post as `tenant` and reports it (`report`: the reporter, category, explanation and the rest of the
 * body but the target). Returns both replies.
 */
export async function reportNewPost(
  gw: Gateway,
  tenant: Tenant,
  report: Record<string, unknown>,
): Promise<{ posted: Reply; report: Reply }> {
  const posted = await gw.request('POST', '/api/v1/moderate', {
    key: tenant.key,
    body: { clientId: uniqueName('post'), name: 'A post', entity: 'post', content: 'a lovely day' },
  });
  const reported = await gw.request('POST', '/api/v1/reports', {
    key: tenant.key,
    body: { target: { type: 'record', id: posted.body.id }, ...report },
  });
  return { posted, report: reported };
}
