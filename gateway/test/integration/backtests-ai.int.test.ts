import { FakeChatApi, verdict } from '../../../moderator/test/integration/fake-chat-api';
import { waitFor } from '../../../deploy/test-support';
import { startModeratorStack, type Gateway, type ModeratorStack } from './harness';

/**
 * AI strategies in backtests: skipped unless the job opts in, and bounded by its `maxCalls` when it does. The moderator
 * (built dist) asks a local stand-in of an OpenAI-compatible chat completions API, which counts what it is asked.
 */
const llm = new FakeChatApi();
let stack: ModeratorStack;
let gw: Gateway;

beforeAll(async () => {
  stack = await startModeratorStack({
    name: 'gwbtai',
    moderatorEnv: {
      LLM_BASE_URL: await llm.start(),
      LLM_API_KEY: 'test-key',
      LLM_MODEL: 'big-model',
      LLM_TIMEOUT_MS: '5000',
      TENANT_CONFIG_TTL_MS: '0',
    },
    gateway: { promptRulesEnabled: true },
  });
  ({ gw } = stack);
});
afterAll(async () => {
  await stack?.close();
  await llm.stop();
});

it('runs prompt strategies only when the job opts in, and makes at most maxCalls calls', async () => {
  const tenant = await gw.newTenant();
  const call = (method: string, path: string, body?: unknown) =>
    gw.request(method, `/api/v1${path}`, { key: tenant.key, ...(body === undefined ? {} : { body }) });
  // Stored under the default rules (no prompt strategy): the LLM is not asked.
  for (let i = 0; i < 6; i += 1) {
    const reply = await call('POST', '/moderate', {
      clientId: `r${i}`,
      name: 'n',
      entity: 'post',
      content: `ticket ${i}`,
    });
    expect(reply.status).toBe(200);
  }
  expect(llm.received).toHaveLength(0);
  const draft = await call('POST', '/rules/versions', {
    rules: [
      {
        id: 'resale',
        name: 'Ticket resale',
        strategies: [{ type: 'prompt', topic: 'ticket resale', prompt: 'Flag offers to resell tickets.' }],
      },
    ],
  });
  expect(draft.status).toBe(201);
  const version = (draft.body as { data: { version: number } }).data.version;
  llm.answer = verdict(true);

  const run = async (body: Record<string, unknown>) => {
    const created = await call('POST', '/backtests', { version, ...body });
    expect(created.status).toBe(202);
    const id = created.body.data.id as string;
    return waitFor(
      async () => {
        const data = (await call('GET', `/backtests/${id}`)).body.data as { status: string };
        return data.status === 'succeeded' ? (data as unknown as { result: Record<string, unknown> }) : undefined;
      },
      { timeoutMs: 60_000, what: 'the backtest to succeed' },
    );
  };

  const without = await run({});
  expect(without.result).toMatchObject({
    judged: 6,
    rules: [{ ruleId: 'resale', flags: 0 }],
    ai: { enabled: false, calls: 0, recordsWithoutAi: 0 },
  });
  expect(llm.received).toHaveLength(0);

  const bounded = await run({ ai: { enabled: true, maxCalls: 4 } });
  expect(bounded.result).toMatchObject({
    judged: 6,
    rules: [{ ruleId: 'resale', flags: 4 }],
    changes: { toFlagged: 4 },
    ai: { enabled: true, calls: 4, recordsWithoutAi: 2 },
  });
  expect(llm.received).toHaveLength(4);
});
