import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatRequest {
  url: string | undefined;
  authorization: string | undefined;
  body: {
    model: string;
    messages: Array<{ role: string; content: string }>;
    response_format?: { type: string; json_schema?: { schema?: unknown } };
  };
}

/** How the server answers one request; `respond` may be kept and called later (a held request). */
export type ChatAnswer = (request: ChatRequest, res: ServerResponse) => void;

/**
 * A stand-in OpenAI-compatible chat completions API on 127.0.0.1: records every request, answers with `answer`
 * (replaceable per test), and counts the requests in flight so that a test can observe concurrency.
 */
export class FakeChatApi {
  readonly received: ChatRequest[] = [];
  answer: ChatAnswer = verdict(false);
  inFlight = 0;
  maxInFlight = 0;
  private readonly server: Server = createServer((req, res) => void this.handle(req, res));

  async start(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close');
  }

  reset(): void {
    this.received.length = 0;
    this.answer = verdict(false);
    this.maxInFlight = this.inFlight;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const request: ChatRequest = {
      url: req.url,
      authorization: req.headers.authorization,
      body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest['body'],
    };
    this.received.push(request);
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    // 'finish' (answer handed to the OS) comes before the client can send its next call; 'close' covers the unanswered.
    let done = false;
    const finished = () => {
      if (!done) this.inFlight -= 1;
      done = true;
    };
    res.on('finish', finished).on('close', finished);
    if (req.headers.authorization !== 'Bearer test-key') {
      status(401)(request, res);
      return;
    }
    this.answer(request, res);
  }
}

/** A chat completion whose message content is `content` (normally the JSON verdict). */
export function completion(content: string): ChatAnswer {
  const body = {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
  };
  return (_request, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

export function verdict(flagged: boolean, reasoning = flagged ? 'Clearly breaks the policy.' : 'Fine.'): ChatAnswer {
  return completion(JSON.stringify({ flagged, reasoning }));
}

export function status(code: number): ChatAnswer {
  return (_request, res) =>
    res.writeHead(code, { 'content-type': 'application/json' }).end('{"error":{"message":"nope"}}');
}

/** Answers in turn, the last one for every request after. */
export function sequence(...answers: ChatAnswer[]): ChatAnswer {
  let next = 0;
  return (request, res) => {
    const answer = answers[Math.min(next, answers.length - 1)];
    next += 1;
    answer?.(request, res);
  };
}

/** Never answers: the request stays open until the client gives up or the server closes. */
export const silence: ChatAnswer = () => undefined;
