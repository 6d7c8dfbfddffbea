import type { ServerResponse } from 'node:http';
import type { Rule, RuleSet } from '@vigil/proto/rules';
import { waitFor } from '../../../deploy/test-support';
import { createEngine, ProviderError, type EngineInput, type LlmOptions } from '../../src/engine';
import { completion, FakeChatApi, sequence, silence, status, verdict } from './fake-chat-api';

function record(overrides: Partial<EngineInput> = {}): EngineInput {
  return {
    entity: 'post',
    name: 'A title',
    text: 'Some text',
    imageUrls: [],
    externalUrls: [],
    tenantId: 'tnt_a',
    ...overrides,
  };
}

function promptRule(id: string, topic = 'spam'): Rule {
  return {
    id,
    name: id,
    enabled: true,
    entities: [],
    strategies: [{ type: 'prompt', topic, prompt: `Flag ${topic}.`, skipImages: false }],
  };
}

const rules: RuleSet = { rules: [promptRule('spam')] };
const api = new FakeChatApi();
let options: LlmOptions;

beforeAll(async () => {
  const baseUrl = await api.start();
  options = {
    baseUrl,
    apiKey: 'test-key',
    model: 'big-model',
    timeoutMs: 2000,
    maxAttempts: 3,
    retryInitialMs: 10,
    tenantConcurrency: 2,
  };
});

afterAll(async () => {
  await api.stop();
});

beforeEach(() => {
  api.reset();
});

const moderate = (input: EngineInput, llm: Partial<LlmOptions> = {}, set: RuleSet = rules) =>
  createEngine({ llm: { ...options, ...llm } }).moderate(input, set);

describe('prompt strategy against an OpenAI-compatible chat completions server', () => {
  it('flags with the topic as the reason, posting the model, policy, content and json_schema format', async () => {
    api.answer = verdict(true, 'The text advertises pills.');
    const result = await moderate(record({ text: 'buy pills' }));

    expect(result).toEqual({ status: 'Flagged', reasons: ['Content flagged for spam'], rules: ['spam'] });
    expect(api.received).toHaveLength(1);
    const [request] = api.received;
    expect(request?.url).toBe('/v1/chat/completions');
    expect(request?.authorization).toBe('Bearer test-key');
    expect(request?.body.model).toBe('big-model');
    expect(request?.body.response_format?.type).toBe('json_schema');
    expect(request?.body.messages[0]?.content).toContain('Flag spam.');
    expect(request?.body.messages[1]).toEqual({ role: 'user', content: 'A title\nbuy pills' });
  });

  it('does not flag when the model answers flagged false', async () => {
    api.answer = verdict(false);
    expect(await moderate(record())).toEqual({ status: 'Compliant', reasons: [], rules: [] });
  });

  it('puts the prior manual decision and its reason into the prompt', async () => {
    await moderate(record({ prior: { status: 'Compliant', reason: 'Reviewed: a recipe, not spam' } }));
    const system = api.received[0]?.body.messages[0]?.content ?? '';
    expect(system).toContain('set its status to Compliant');
    expect(system).toContain('Reviewed: a recipe, not spam');
  });

  it('leaves human feedback out when there is no manual decision', async () => {
    await moderate(record());
    expect(api.received[0]?.body.messages[0]?.content).not.toContain('human moderator');
  });

  it('downgrades a flag when the review model finds the reasoning uncertain', async () => {
    api.answer = (request, res) =>
      request.body.model === 'small-model'
        ? verdict(false, 'The reasoning hedges.')(request, res)
        : verdict(true, 'Might be spam, not sure.')(request, res);
    const result = await moderate(record(), { reviewModel: 'small-model' });

    expect(result.status).toBe('Compliant');
    expect(api.received.map((request) => request.body.model)).toEqual(['big-model', 'small-model']);
    expect(api.received[1]?.body.messages[1]?.content).toBe('Might be spam, not sure.');
  });

  it('keeps a flag the review model confirms, and skips the review when the first pass does not flag', async () => {
    api.answer = verdict(true);
    expect((await moderate(record(), { reviewModel: 'small-model' })).status).toBe('Flagged');
    api.reset();
    api.answer = verdict(false);
    expect((await moderate(record(), { reviewModel: 'small-model' })).status).toBe('Compliant');
    expect(api.received).toHaveLength(1);
  });

  it.each([
    ['content that is not JSON', completion('Yes, this is spam.')],
    ['a verdict without flagged', completion('{"reasoning":"spam"}')],
    ['a body without choices', (_r: unknown, res: ServerResponse) => res.writeHead(200).end('{"id":"x"}')],
  ])('fails with a non-retriable ProviderError on %s, without retrying', async (_what, answer) => {
    api.answer = answer;
    const error = await moderate(record()).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).retriable).toBe(false);
    expect(api.received).toHaveLength(1);
  });

  it('times out a slow answer as a retriable ProviderError after every attempt', async () => {
    api.answer = silence;
    const error = await moderate(record(), { timeoutMs: 200, maxAttempts: 2 }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).retriable).toBe(true);
    expect((error as ProviderError).message).toContain('timed out');
    expect(api.received).toHaveLength(2);
  });

  it('retries 429 and 500 then succeeds', async () => {
    api.answer = sequence(status(429), status(500), verdict(true));
    expect((await moderate(record())).status).toBe('Flagged');
    expect(api.received).toHaveLength(3);
  });

  it('fails with a retriable ProviderError when every attempt answers 503', async () => {
    api.answer = status(503);
    const error = await moderate(record()).catch((err: unknown) => err);
    expect((error as ProviderError).retriable).toBe(true);
    expect(api.received).toHaveLength(3);
  });

  it('does not retry a 401 (bad key) and reports it as non-retriable', async () => {
    const error = await moderate(record(), { apiKey: 'wrong' }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).retriable).toBe(false);
    expect(api.received).toHaveLength(1);
  });

  it('never flags a prompt strategy without LLM configuration, and makes no call', async () => {
    const result = await createEngine({}).moderate(record(), rules);
    expect(result.status).toBe('Compliant');
    expect(api.received).toHaveLength(0);
  });

  it('holds at most tenantConcurrency calls in flight per tenant, while another tenant still gets through', async () => {
    const held: Array<() => void> = [];
    api.answer = (request, res) => held.push(() => verdict(false)(request, res));
    const engine = createEngine({ llm: options });
    const many: RuleSet = { rules: ['a', 'b', 'c', 'd', 'e', 'f'].map((id) => promptRule(id)) };

    const first = engine.moderate(record({ text: 'tenant a' }), many);
    await waitFor(() => api.inFlight === 2, { timeoutMs: 5000, what: 'two calls of tenant a in flight' });
    const other = engine.moderate(record({ tenantId: 'tnt_b', text: 'tenant b' }), rules);
    await waitFor(() => api.inFlight === 3, { timeoutMs: 5000, what: "tenant b's call alongside" });
    expect(api.received.filter((r) => r.body.messages[1]?.content.includes('tenant a'))).toHaveLength(2);

    // Release one held answer at a time until every call has been answered.
    while (api.received.length < 7 || held.length > 0) {
      await waitFor(() => held.length > 0, { timeoutMs: 5000, what: 'a held call' });
      held.shift()?.();
    }
    await Promise.all([first, other]);
    expect(api.received).toHaveLength(7);
    expect(api.maxInFlight).toBe(3);
  });
});
