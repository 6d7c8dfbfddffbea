import { Agent, request } from 'undici';
import { callFailureOf } from './call-failure';
import { type AddressPolicy, checkLiteralHost, guardedLookup } from './ssrf';

/**
 * Response bodies, where the operator keeps them (`keepResponseBody`), are truncated: enough to read an error, never a
 * whole page.
 */
const RESPONSE_BODY_LIMIT = 1024;

/** Bounded set, used as a metric label and stored as the attempt's `error`. */
type SendError = 'timeout' | 'network_error' | 'ssrf_refused' | 'invalid_url';

export interface SendResult {
  statusCode?: number;
  error?: SendError;
  durationMs: number;
  responseBody?: string;
  retryAfter?: string;
}

export interface HttpSender {
  send(url: string, headers: Record<string, string>, body: string): Promise<SendResult>;
  close(): Promise<void>;
}

/**
 * POSTs with undici: no redirects followed (undici's `request` follows none without the redirect interceptor; a 3xx
 * is the receiver's answer, and a failure), a deadline over the whole
 * exchange, and the address-checking lookup so only allowed addresses are ever connected to.
 */
export function createHttpSender(options: {
  timeoutMs: number;
  policy: AddressPolicy;
  /** Keep the start of the response body for the delivery log; otherwise it is discarded unread. */
  keepResponseBody?: boolean;
}): HttpSender {
  const agent = new Agent({
    connect: { lookup: guardedLookup(options.policy), timeout: options.timeoutMs },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  return {
    async send(url, headers, body) {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      let parsed: URL;
      try {
        parsed = new URL(url);
        if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new TypeError('unsupported protocol');
      } catch {
        return { error: 'invalid_url', durationMs: elapsed() };
      }
      const signal = AbortSignal.timeout(options.timeoutMs);
      try {
        checkLiteralHost(parsed, options.policy);
        const response = await request(parsed, {
          method: 'POST',
          headers,
          body,
          dispatcher: agent,
          signal,
        });
        let responseBody: string | undefined;
        if (options.keepResponseBody) responseBody = await readTruncated(response.body);
        else await response.body.dump(); // read and dropped (bounded by undici), so the connection can be reused
        const retryAfter = response.headers['retry-after'];
        return {
          statusCode: response.statusCode,
          durationMs: elapsed(),
          ...(responseBody !== undefined ? { responseBody } : {}),
          retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
        };
      } catch (err) {
        return { error: callFailureOf(err, signal), durationMs: elapsed() };
      }
    },
    close: () => agent.close(),
  };
}

async function readTruncated(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= RESPONSE_BODY_LIMIT) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString('utf8');
}
