import { Agent, request } from 'undici';
import type { PaymentAction } from '@vigil/proto';
import { parseRetryAfter } from '../domain/retry-policy';

/** Bounded set, stored as the attempt's `error` and used as a metric label. */
type StripeError = 'rate_limited' | 'server_error' | 'rejected' | 'unauthorized' | 'timeout' | 'network_error';

interface StripeResult {
  ok: boolean;
  /** Worth another attempt later: 429, 409 (Stripe's lock or idempotency conflict), 5xx, no answer. */
  retriable: boolean;
  durationMs: number;
  statusCode?: number;
  error?: StripeError;
  /** Stripe's `Request-Id`, for the audit trail and for Stripe's support. */
  requestId?: string;
  /** `error.type` and `error.code` of Stripe's error body, when they are plain identifiers. */
  stripeErrorType?: string;
  stripeErrorCode?: string;
  retryAfterMs?: number;
}

export interface StripeClient {
  /** Pauses charges (`pause`) or resumes charges and payouts (`resume`) on a connected account. */
  apply(input: {
    secretKey: string;
    accountId: string;
    action: PaymentAction;
    idempotencyKey: string;
  }): Promise<StripeResult>;
  close(): Promise<void>;
}

/** Error bodies are read up to this size; Stripe's are a few hundred bytes. */
const BODY_LIMIT = 16 * 1024;
const RETRY_AFTER_CAP_MS = 60 * 60 * 1000;
const IDENTIFIER = /^[a-z][a-z0-9_]{0,63}$/;

/** The form fields of each action (Iffy's: the preview `risk_controls` of the Accounts API). */
function formOf(action: PaymentAction): URLSearchParams {
  const form = new URLSearchParams();
  if (action === 'pause') {
    form.set('risk_controls[charges][pause_requested]', 'true');
  } else {
    form.set('risk_controls[charges][pause_requested]', 'false');
    form.set('risk_controls[payouts][pause_requested]', 'false');
  }
  return form;
}

/**
 * One call of Stripe's API, `POST /v1/accounts/{id}`, form-encoded with the tenant's key as a Bearer token, over undici
 * with a deadline on the whole exchange. Stripe's own SDK would bring megabytes for this one call and types that lack
 * the preview `risk_controls` parameter. Retrying is the caller's (a durable queue): this makes one attempt and says
 * whether another is worth it, from the status and Stripe's `Stripe-Should-Retry` header, never from message text.
 */
export function createStripeClient(options: { baseUrl: string; timeoutMs: number }): StripeClient {
  const agent = new Agent({
    connect: { timeout: options.timeoutMs },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  const base = options.baseUrl.replace(/\/+$/, '');
  return {
    async apply({ secretKey, accountId, action, idempotencyKey }) {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      const signal = AbortSignal.timeout(options.timeoutMs);
      try {
        const response = await request(`${base}/v1/accounts/${encodeURIComponent(accountId)}`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${secretKey}`,
            'content-type': 'application/x-www-form-urlencoded',
            'idempotency-key': idempotencyKey,
            'user-agent': 'vigil-notifier',
          },
          body: formOf(action).toString(),
          dispatcher: agent,
          signal,
        });
        const header = (name: string) => {
          const value = response.headers[name];
          return Array.isArray(value) ? value[0] : value;
        };
        const statusCode = response.statusCode;
        const requestId = header('request-id');
        const answered = { statusCode, ...(requestId ? { requestId } : {}) };
        if (statusCode >= 200 && statusCode < 300) {
          await response.body.dump();
          return { ...answered, ok: true, retriable: false, durationMs: elapsed() };
        }
        const body = await readBounded(response.body);
        const { type, code } = errorOf(body);
        const retryAfterMs = parseRetryAfter(header('retry-after'), new Date(), RETRY_AFTER_CAP_MS);
        return {
          ...answered,
          ok: false,
          retriable: shouldRetry(statusCode, header('stripe-should-retry')),
          durationMs: elapsed(),
          error: errorFor(statusCode),
          ...(type ? { stripeErrorType: type } : {}),
          ...(code ? { stripeErrorCode: code } : {}),
          ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
        };
      } catch (err) {
        return { ok: false, retriable: true, durationMs: elapsed(), error: classify(err, signal) };
      }
    },
    close: () => agent.close(),
  };
}

/**
 * Stripe's `Stripe-Should-Retry` header decides when present; otherwise 429, 409 (a lock or idempotency conflict with a
 * request still running) and 5xx are worth another attempt, and every other 4xx (a bad key, an unknown account, a
 * refused parameter) would fail the same way again.
 */
export function shouldRetry(statusCode: number, header: string | undefined): boolean {
  if (header === 'true') return true;
  if (header === 'false') return false;
  return statusCode === 409 || statusCode === 429 || statusCode >= 500;
}

function errorFor(statusCode: number): StripeError {
  if (statusCode === 429) return 'rate_limited';
  if (statusCode >= 500) return 'server_error';
  if (statusCode === 401) return 'unauthorized';
  return 'rejected';
}

async function readBounded(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= BODY_LIMIT) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, BODY_LIMIT).toString('utf8');
}

/** Stripe's error body `{ error: { type, code, message } }`: the type and code, when they are identifiers; no message. */
export function errorOf(body: string): { type?: string; code?: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return {};
  }
  const error = (parsed as { error?: { type?: unknown; code?: unknown } } | null)?.error;
  const pick = (value: unknown) => (typeof value === 'string' && IDENTIFIER.test(value) ? value : undefined);
  return { type: pick(error?.type), code: pick(error?.code) };
}

function classify(err: unknown, signal: AbortSignal): 'timeout' | 'network_error' {
  for (let cause: unknown = err, depth = 0; cause && depth < 5; depth += 1) {
    const code = (cause as { code?: string }).code;
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
      return 'timeout';
    }
    cause = (cause as { cause?: unknown }).cause;
  }
  return signal.aborted ? 'timeout' : 'network_error';
}
