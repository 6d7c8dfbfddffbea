import * as grpc from '@grpc/grpc-js';
import { COLLECTIONS } from '@vigil/proto';
import { findPreset, ruleFromPreset } from '@vigil/proto/rules';
import type { ModerateResponse__Output } from '@vigil/proto/dist/generated/vigil/moderation/v1/ModerateResponse';
import { waitFor } from '../../../deploy/test-support';
import { content, startHarness, type Harness } from './harness';
import { FakeChatApi, verdict } from './fake-chat-api';

const api = new FakeChatApi();
let h: Harness;

beforeAll(async () => {
  const baseUrl = await api.start();
  h = await startHarness({
    LLM_BASE_URL: baseUrl,
    LLM_API_KEY: 'test-key',
    LLM_MODEL: 'big-model',
    LLM_TIMEOUT_MS: 5000,
    LLM_MAX_ATTEMPTS: 2,
    LLM_RETRY_INITIAL_MS: 10,
    LLM_TENANT_CONCURRENCY: 2,
    MODERATE_TENANT_CONCURRENCY: 1,
    MODERATE_QUEUE_PER_TENANT: 1,
    MODERATE_HEAVY_YIELD_MS: 60_000,
  });
});
afterAll(async () => {
  await h.close();
  await api.stop();
});

/** A tenant whose rule set is its own copy of the spam preset, as POST /rules/presets/spam stores it. */
async function spamTenant(): Promise<string> {
  const tenantId = await h.newTenant();
  const preset = findPreset('spam');
  if (!preset) throw new Error('no spam preset');
  await h.db
    .collection<{ _id: string; rules: unknown[] }>(COLLECTIONS.rules)
    .insertOne({ _id: tenantId, rules: [ruleFromPreset(preset)] });
  return tenantId;
}

const moderate = (tenantId: string, text: string, clientId = 'post-1') =>
  h.call<Record<string, unknown>, ModerateResponse__Output>('Moderate', {
    tenantId,
    clientId,
    name: 'Title',
    entity: 'post',
    content: content(text),
    requestId: 'req-1',
  });

describe('prompt rules through the moderator', () => {
  it('flags a record the LLM judges against the preset, with the topic as the only reason', async () => {
    const tenantId = await spamTenant();
    api.answer = verdict(true, 'Repeated advertising.');
    const res = await moderate(tenantId, 'BUY NOW buy now buy now');

    expect(res).toMatchObject({ status: 'Flagged', rules: ['spam'], reasons: ['Content flagged for spam'] });
    expect(api.received.at(-1)?.body.messages[1]?.content).toBe('Title\nBUY NOW buy now buy now');
    expect(h.logText()).not.toContain('BUY NOW');
    expect(h.logText()).not.toContain('Repeated advertising');
  });

  it("feeds a human's decision and reason back into the next prompt", async () => {
    const tenantId = await spamTenant();
    api.answer = verdict(true);
    const first = await moderate(tenantId, 'a cake recipe with a shop link');
    await h.call('ModerateRecordManually', {
      tenantId,
      recordId: first.recordId,
      status: 'Compliant',
      reason: 'A recipe, not spam',
      actor: 'api_key:k1',
    });
    api.reset();
    api.answer = verdict(false);
    const again = await moderate(tenantId, 'a cake recipe with a shop link');

    expect(again.status).toBe('Compliant');
    const system = api.received[0]?.body.messages[0]?.content ?? '';
    expect(system).toContain('set its status to Compliant');
    expect(system).toContain('A recipe, not spam');
  });

  it("holds a tenant's Moderate calls to its share while another tenant's call runs, and refuses more than its queue", async () => {
    const [a, b] = [await spamTenant(), await spamTenant()];
    api.reset();
    const held: Array<() => void> = [];
    api.answer = (request, res) => held.push(() => verdict(false)(request, res));

    const other = moderate(b, 'tenant b', 'post-b');
    await waitFor(() => api.inFlight === 1, { timeoutMs: 5000, what: "tenant b's call at the LLM" });
    const first = moderate(a, 'tenant a one', 'post-a1');
    await waitFor(() => api.inFlight === 2, { timeoutMs: 5000, what: "tenant a's first call at the LLM" });
    const second = moderate(a, 'tenant a two', 'post-a2');
    // The second waits for the first (MODERATE_TENANT_CONCURRENCY 1) and fills the queue (1): a third is refused.
    await expect(moderate(a, 'tenant a three', 'post-a3')).rejects.toMatchObject({
      code: grpc.status.UNAVAILABLE,
      details: 'too many moderations waiting for this tenant',
    });
    expect(api.received.filter((r) => r.body.messages[1]?.content.includes('tenant a'))).toHaveLength(1);

    while (held.length > 0 || api.received.length < 3) {
      await waitFor(() => held.length > 0, { timeoutMs: 5000, what: 'a held call' });
      held.shift()?.();
    }
    await expect(Promise.all([other, first, second])).resolves.toHaveLength(3);
    expect(api.received).toHaveLength(3);
    expect(api.maxInFlight).toBe(2);
  });

  it("starts a tenant's large record only once another tenant's call in flight has ended", async () => {
    const [a, b] = [await spamTenant(), await spamTenant()];
    api.reset();
    const held: Array<() => void> = [];
    api.answer = (request, res) => held.push(() => verdict(false)(request, res));
    const yielding = async () =>
      (await h.registry.getSingleMetric('moderator_moderate_heavy_yielding')?.get())?.values[0]?.value;

    const other = moderate(b, 'tenant b', 'post-b');
    await waitFor(() => api.inFlight === 1, { timeoutMs: 5000, what: "tenant b's call at the LLM" });
    // Over 8 KiB: a heavy call. It waits for b's call to end before it moderates (reaches the LLM).
    const large = moderate(a, `tenant a ${'long text '.repeat(1000)}`, 'post-large');
    await waitFor(async () => (await yielding()) === 1, { timeoutMs: 5000, what: "tenant a's large record waiting" });
    expect(api.inFlight).toBe(1);
    held.shift()?.();
    await other;
    await waitFor(() => held.length > 0, { timeoutMs: 5000, what: "tenant a's call at the LLM" });
    expect(await yielding()).toBe(0);
    held.shift()?.();
    await expect(large).resolves.toMatchObject({ status: 'Compliant' });
    expect(api.maxInFlight).toBe(1);
  });
});
