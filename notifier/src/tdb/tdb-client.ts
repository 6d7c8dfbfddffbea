import { Agent, request } from 'undici';
import type { TdbStatement } from '@vigil/proto';
import { parseRetryAfter } from '../domain/retry-policy';
import { callFailureOf } from '../delivery/call-failure';
import { checkLiteralHost, guardedLookup, type AddressPolicy } from '../delivery/ssrf';

/** Bounded set, stored as an attempt's `error` and used as a metric label. */
type TdbCallError =
  | 'unauthorized'
  | 'rate_limited'
  | 'server_error'
  | 'unexpected_status'
  | 'timeout'
  | 'network_error'
  | 'ssrf_refused'
  | 'invalid_url';

export type TdbCallResult =
  | { kind: 'created'; durationMs: number; statusCode: number; uuids: Map<string, string> }
  /** 422: the database refused some statements, by position in the call; it stored none. */
  | { kind: 'refused'; durationMs: number; statusCode: number; errors: Map<number, Record<string, string[]>> }
  | { kind: 'failed'; durationMs: number; statusCode?: number; error: TdbCallError; retryAfterMs?: number };

export interface TdbClient {
  /** One `POST /api/v1/statements` call with up to 100 statements. */
  submit(input: { baseUrl: string; token: string; statements: TdbStatement[] }): Promise<TdbCallResult>;
  /**
   * `GET /api/v1/statement/existing-puid/{puid}`: whether the platform already stored a statement with this puid
   * (302), or not (404); undefined when the database gave neither answer.
   */
  exists(input: { baseUrl: string; token: string; puid: string }): Promise<boolean | undefined>;
  close(): Promise<void>;
}

/** Answers are read up to this size: 100 statements echoed back are well under it. */
const BODY_LIMIT = 8 * 1024 * 1024;
const RETRY_AFTER_CAP_MS = 6 * 60 * 60 * 1000;
/** Messages kept per refused field, and their length: the database's own words, never our statement's values. */
const MESSAGES_KEPT = 5;
const MESSAGE_LENGTH = 300;

/**
 * The Transparency Database's batch endpoint over undici: a deadline on the whole exchange, no redirects, and the
 * webhook address policy on every connection (a tenant names the address). Retrying is the caller's (a durable queue).
 */
export function createTdbClient(options: { timeoutMs: number; policy: AddressPolicy }): TdbClient {
  const agent = new Agent({
    connect: { lookup: guardedLookup(options.policy), timeout: options.timeoutMs },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  return {
    async submit({ baseUrl, token, statements }) {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      let url: URL;
      try {
        url = new URL(`${baseUrl.replace(/\/+$/, '')}/api/v1/statements`);
      } catch {
        return { kind: 'failed', durationMs: elapsed(), error: 'invalid_url' };
      }
      const signal = AbortSignal.timeout(options.timeoutMs);
      try {
        checkLiteralHost(url, options.policy);
        const response = await request(url, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            accept: 'application/json',
            'content-type': 'application/json',
          },
          body: JSON.stringify({ statements }),
          dispatcher: agent,
          signal,
        });
        const statusCode = response.statusCode;
        const text = await readLimited(response.body);
        if (statusCode === 201 || statusCode === 200) {
          return { kind: 'created', durationMs: elapsed(), statusCode, uuids: uuidsOf(text) };
        }
        if (statusCode === 422) {
          const errors = refusalsOf(text);
          if (errors.size > 0) return { kind: 'refused', durationMs: elapsed(), statusCode, errors };
          return { kind: 'failed', durationMs: elapsed(), statusCode, error: 'unexpected_status' };
        }
        const header = response.headers['retry-after'];
        const retryAfterMs = parseRetryAfter(
          Array.isArray(header) ? header[0] : header,
          new Date(),
          RETRY_AFTER_CAP_MS,
        );
        const error: TdbCallError =
          statusCode === 401 || statusCode === 403
            ? 'unauthorized'
            : statusCode === 429
              ? 'rate_limited'
              : statusCode >= 500
                ? 'server_error'
                : 'unexpected_status';
        return {
          kind: 'failed',
          durationMs: elapsed(),
          statusCode,
          error,
          ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
        };
      } catch (err) {
        return { kind: 'failed', durationMs: elapsed(), error: callFailureOf(err, signal) };
      }
    },
    async exists({ baseUrl, token, puid }) {
      try {
        const url = new URL(
          `${baseUrl.replace(/\/+$/, '')}/api/v1/statement/existing-puid/${encodeURIComponent(puid)}`,
        );
        checkLiteralHost(url, options.policy);
        const response = await request(url, {
          method: 'GET',
          headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
          dispatcher: agent,
          signal: AbortSignal.timeout(options.timeoutMs),
        });
        await response.body.dump();
        if (response.statusCode === 302) return true;
        if (response.statusCode === 404) return false;
        return undefined;
      } catch {
        return undefined;
      }
    },
    close: () => agent.close(),
  };
}

async function readLimited(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > BODY_LIMIT) {
      body.destroy();
      break;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The database's id of each created statement, by puid. */
function uuidsOf(text: string): Map<string, string> {
  const uuids = new Map<string, string>();
  const statements = (parse(text) as { statements?: unknown } | undefined)?.statements;
  if (!Array.isArray(statements)) return uuids;
  for (const entry of statements as Array<{ puid?: unknown; uuid?: unknown }>) {
    if (typeof entry?.puid === 'string' && typeof entry.uuid === 'string') {
      uuids.set(entry.puid, entry.uuid.slice(0, 64));
    }
  }
  return uuids;
}

/** The refusal of a batch: `errors.statement_<n>` gives statement n's fields and messages. */
function refusalsOf(text: string): Map<number, Record<string, string[]>> {
  const refused = new Map<number, Record<string, string[]>>();
  const errors = (parse(text) as { errors?: unknown } | undefined)?.errors;
  if (typeof errors !== 'object' || errors === null) return refused;
  for (const [key, fields] of Object.entries(errors as Record<string, unknown>)) {
    const match = /^statement_(\d{1,3})$/.exec(key);
    if (!match || typeof fields !== 'object' || fields === null) continue;
    const kept: Record<string, string[]> = {};
    for (const [field, messages] of Object.entries(fields as Record<string, unknown>).slice(0, 40)) {
      if (!/^[a-z_]{1,64}$/.test(field)) continue;
      kept[field] = (Array.isArray(messages) ? messages : [messages])
        .filter((message): message is string => typeof message === 'string')
        .slice(0, MESSAGES_KEPT)
        .map((message) => message.slice(0, MESSAGE_LENGTH));
    }
    refused.set(Number(match[1]), kept);
  }
  return refused;
}

/**
 * Whether a refusal names the puid alone. Vigil's puids are event ids, always of the allowed form, so that is the
 * database saying the puid is taken: stored already by a call whose answer was lost (confirmed with `exists`).
 */
export function onlyPuidRefused(fields: Record<string, string[]>): boolean {
  const keys = Object.keys(fields);
  return keys.length === 1 && keys[0] === 'puid';
}
