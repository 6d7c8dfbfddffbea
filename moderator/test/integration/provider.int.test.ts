import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Rule, RuleSet } from '@vigil/proto/rules';
import { createEngine, ProviderError, type EngineInput, type ModerationEngine } from '../../src/engine';

interface Received {
  method: string | undefined;
  url: string | undefined;
  authorization: string | undefined;
  contentType: string | undefined;
  body: unknown;
}

type Answer = (res: ServerResponse) => void;

/** A stand-in OpenAI moderation API: records each request and answers with the current `answer`. */
class FakeModerationApi {
  readonly received: Received[] = [];
  answer: Answer = scores({});
  private readonly server: Server = createServer((req, res) => void this.handle(req, res));

  async start(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close');
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    this.received.push({
      method: req.method,
      url: req.url,
      authorization: req.headers.authorization,
      contentType: req.headers['content-type'],
      body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown,
    });
    if (req.headers.authorization !== 'Bearer test-key') {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":{"message":"bad key"}}');
      return;
    }
    this.answer(res);
  }
}

function scores(categoryScores: Record<string, number>): Answer {
  const categories = Object.fromEntries(Object.entries(categoryScores).map(([name, score]) => [name, score > 0.5]));
  const body = {
    id: 'modr-1',
    model: 'omni-moderation-latest',
    results: [{ flagged: false, categories, category_scores: categoryScores }],
  };
  return (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function status(code: number): Answer {
  return (res) => res.writeHead(code, { 'content-type': 'application/json' }).end('{"error":{"message":"nope"}}');
}

/** Never answers: the request stays open until the client gives up or the server closes. */
const silence: Answer = () => undefined;

function record(overrides: Partial<EngineInput> = {}): EngineInput {
  return { entity: 'post', name: 'A title', text: 'Some text', imageUrls: [], externalUrls: [], ...overrides };
}

function aiRule(id: string, thresholds: Record<string, number>, extra: Partial<Rule> = {}): Rule {
  return {
    id,
    name: id,
    enabled: true,
    entities: [],
    strategies: [{ type: 'openai-moderation', thresholds }],
    ...extra,
  };
}

const api = new FakeModerationApi();
let baseUrl: string;
let engine: ModerationEngine;

beforeAll(async () => {
  baseUrl = await api.start();
  // A deadline that holds on a busy machine; the timeout test below uses an engine of its own with a short one.
  engine = createEngine({
    provider: { baseUrl, apiKey: 'test-key', model: 'omni-moderation-latest', timeoutMs: 10_000 },
  });
});

afterAll(async () => {
  await api.stop();
});

beforeEach(() => {
  api.received.length = 0;
  api.answer = scores({});
});

describe('openai-moderation strategy against an OpenAI-compatible server', () => {
  it('posts the model and every judged field with the bearer key, once per record', async () => {
    const rules: RuleSet = { rules: [aiRule('a', { hate: 0.9 }), aiRule('b', { violence: 0.9 })] };
    await engine.moderate(record({ metadata: { bio: { lines: ['nested line'] }, age: 30 } }), rules);

    expect(api.received).toEqual([
      {
        method: 'POST',
        url: '/v1/moderations',
        authorization: 'Bearer test-key',
        contentType: 'application/json',
        body: { model: 'omni-moderation-latest', input: 'A title\nSome text\nnested line' },
      },
    ]);
  });

  it.each<{ name: string; scores: Record<string, number>; thresholds: Record<string, number>; flagged: boolean }>([
    { name: 'score above threshold flags', scores: { hate: 0.51 }, thresholds: { hate: 0.5 }, flagged: true },
    { name: 'score equal to threshold passes', scores: { hate: 0.5 }, thresholds: { hate: 0.5 }, flagged: false },
    { name: 'score below threshold passes', scores: { hate: 0.2 }, thresholds: { hate: 0.5 }, flagged: false },
    { name: 'threshold 0 flags any non-zero score', scores: { hate: 0.001 }, thresholds: { hate: 0 }, flagged: true },
    { name: 'threshold 0 passes a zero score', scores: { hate: 0 }, thresholds: { hate: 0 }, flagged: false },
    {
      name: 'a category without threshold is ignored',
      scores: { sexual: 0.99 },
      thresholds: { hate: 0.5 },
      flagged: false,
    },
  ])('$name', async ({ scores: answered, thresholds, flagged }) => {
    api.answer = scores(answered);
    const result = await engine.moderate(record(), { rules: [aiRule('ai', thresholds)] });
    expect(result.status).toBe(flagged ? 'Flagged' : 'Compliant');
    expect(result.rules).toEqual(flagged ? ['ai'] : []);
    expect(result.reasons).toEqual(flagged ? ['Content contains hate speech'] : []);
    expect(api.received).toHaveLength(1);
  });

  it('reports one sentence per flagged category and combines with local strategies', async () => {
    api.answer = scores({ hate: 0.9, violence: 0.8, sexual: 0.1 });
    const rules: RuleSet = {
      rules: [
        { ...aiRule('ai', { hate: 0.5, violence: 0.5, sexual: 0.5 }) },
        {
          id: 'words',
          name: 'words',
          enabled: true,
          entities: [],
          strategies: [{ type: 'blocklist', words: ['title'], wholeWord: true, profanity: false }],
        },
      ],
    };
    const result = await engine.moderate(record(), rules);
    expect(result).toEqual({
      status: 'Flagged',
      reasons: ['Content contains hate speech', 'Content depicts violence', 'Content contains blocked word: title'],
      rules: ['ai', 'words'],
    });
  });

  it('does not call the provider when the record has no text to judge', async () => {
    const result = await engine.moderate(
      record({ name: '', text: '', metadata: { n: 1 }, imageUrls: ['https://x.test/i.png'] }),
      {
        rules: [aiRule('ai', { hate: 0 })],
      },
    );
    expect(result.status).toBe('Compliant');
    expect(api.received).toHaveLength(0);
  });

  it('does not call the provider when no applicable rule uses it', async () => {
    const rules: RuleSet = {
      rules: [
        aiRule('off', { hate: 0.1 }, { enabled: false }),
        aiRule('comments', { hate: 0.1 }, { entities: ['comment'] }),
      ],
    };
    const result = await engine.moderate(record({ entity: 'post' }), rules);
    expect(result.status).toBe('Compliant');
    expect(api.received).toHaveLength(0);
  });

  it.each([
    { name: '500', answer: status(500), retriable: true },
    { name: '503', answer: status(503), retriable: true },
    { name: '429', answer: status(429), retriable: true },
    { name: '400', answer: status(400), retriable: false },
    {
      name: 'a body that is not JSON',
      answer: (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('<html>'),
      retriable: false,
    },
    {
      name: 'a body cut off mid-way',
      answer: (res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
        res.write('{"results":[', () => res.destroy());
      },
      retriable: true,
    },
    {
      name: 'a JSON body without results',
      answer: (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"results":[]}'),
      retriable: false,
    },
  ])('throws ProviderError(retriable=$retriable) on $name', async ({ answer, retriable }) => {
    api.answer = answer;
    const error = await engine
      .moderate(record(), { rules: [aiRule('ai', { hate: 0.5 })] })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).retriable).toBe(retriable);
  });

  it('throws a non-retriable ProviderError when the key is refused (401)', async () => {
    const wrongKey = createEngine({ provider: { baseUrl, apiKey: 'other', model: 'm', timeoutMs: 500 } });
    const error = await wrongKey
      .moderate(record(), { rules: [aiRule('ai', { hate: 0.5 })] })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).retriable).toBe(false);
    expect(api.received[0]?.authorization).toBe('Bearer other');
  });

  it('throws a retriable ProviderError when the provider does not answer within the timeout', async () => {
    api.answer = silence;
    const quick = createEngine({ provider: { baseUrl, apiKey: 'test-key', model: 'm', timeoutMs: 500 } });
    const started = Date.now();
    const error = await quick.moderate(record(), { rules: [aiRule('ai', { hate: 0.5 })] }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).retriable).toBe(true);
    expect((error as ProviderError).message).toMatch(/timed out/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
  });

  it("hands back the caller's abort reason when the caller's signal fires first", async () => {
    api.answer = silence;
    const caller = new AbortController();
    const pending = engine.moderate(record(), { rules: [aiRule('ai', { hate: 0.5 })] }, caller.signal);
    const reason = new Error('deadline exceeded');
    caller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });

  it('throws a retriable ProviderError when nothing listens at the base URL', async () => {
    const closed = new FakeModerationApi();
    const closedUrl = await closed.start();
    await closed.stop();
    const unreachable = createEngine({
      provider: { baseUrl: closedUrl, apiKey: 'test-key', model: 'm', timeoutMs: 500 },
    });
    const error = await unreachable
      .moderate(record(), { rules: [aiRule('ai', { hate: 0.5 })] })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).retriable).toBe(true);
  });
});
