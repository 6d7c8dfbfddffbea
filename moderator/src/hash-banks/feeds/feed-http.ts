import { hasCredentials, literalHost, type AddressPolicy, type FeedFailure } from '@vigil/proto';
import { GuardedAgent, readWithin, RefusedAddress } from '../../engine/images/fetch';

export interface FeedHttpOptions {
  /** Public unicast, plus HASH_FEED_ALLOWED_CIDRS (never metadata addresses): the image and webhook rules. */
  policy: AddressPolicy;
  /** Bytes of one answer at most (announced or read). */
  maxBytes: number;
  /** One call's deadline, milliseconds. */
  timeoutMs: number;
}

export interface FeedCall {
  method?: 'GET' | 'POST' | 'PUT';
  headers?: Record<string, string>;
  body?: string;
}

export type FeedAnswer =
  | { ok: true; status: number; text: string; headers: Record<string, string | undefined> }
  | { ok: false; failure: FeedFailure; status?: number };

/** Thrown by the exchange clients with the failure a run reports. */
export class FeedError extends Error {
  constructor(
    readonly failure: FeedFailure,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The one HTTP client of feeds and exchanges, under the address rules of images and webhooks: https only (plain
 * http only to an IP literal inside the allow-list, for local stand-ins), no credentials in the URL, every resolved
 * address checked and the checked one connected to, no redirect followed, at most `maxBytes`, within `timeoutMs`.
 * Credentials travel in headers the caller sets; nothing here logs a header or a body.
 */
export class FeedHttp {
  private readonly agent: GuardedAgent;

  constructor(private readonly options: FeedHttpOptions) {
    this.agent = new GuardedAgent(options.policy);
  }

  /** Why the URL may not be fetched, or undefined when it may. */
  refusal(url: string): FeedFailure | undefined {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return 'refused';
    }
    if (hasCredentials(parsed)) return 'refused';
    const literal = literalHost(parsed);
    if (literal !== undefined && !this.options.policy.allowed(literal)) return 'refused';
    if (parsed.protocol === 'https:') return undefined;
    if (parsed.protocol === 'http:' && literal !== undefined && this.options.policy.listed(literal)) return undefined;
    return 'refused';
  }

  async call(url: string, call: FeedCall = {}, signal?: AbortSignal): Promise<FeedAnswer> {
    const refused = this.refusal(url);
    if (refused) return { ok: false, failure: refused };
    const deadline = AbortSignal.timeout(this.options.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, deadline]) : deadline;
    try {
      const response = await this.agent.request(url, {
        method: call.method ?? 'GET',
        headers: call.headers,
        body: call.body,
        signal: combined,
      });
      response.body.on('error', () => undefined);
      const close = () => response.body.destroy();
      const status = response.statusCode;
      if (status === 304) {
        close();
        return { ok: true, status, text: '', headers: headersOf(response.headers) };
      }
      if (status === 401 || status === 403) {
        close();
        return { ok: false, failure: 'unauthorized', status };
      }
      if (status < 200 || status > 299) {
        close();
        return { ok: false, failure: 'http_status', status };
      }
      const read = await readWithin(response, this.options.maxBytes);
      if (!read) return { ok: false, failure: 'too_large' };
      return {
        ok: true,
        status,
        text: Buffer.concat(read.chunks).toString('utf8'),
        headers: headersOf(response.headers),
      };
    } catch (err) {
      if (deadline.aborted) return { ok: false, failure: 'timeout' };
      if (err instanceof RefusedAddress || (err as { cause?: unknown }).cause instanceof RefusedAddress) {
        return { ok: false, failure: 'refused' };
      }
      return { ok: false, failure: 'network_error' };
    }
  }

  /** `call`, but a failure is thrown as a FeedError naming the source and the status. */
  async expect(what: string, url: string, call: FeedCall = {}, signal?: AbortSignal) {
    const answer = await this.call(url, call, signal);
    if (!answer.ok) {
      throw new FeedError(answer.failure, `${what}: ${answer.failure}${answer.status ? ` (${answer.status})` : ''}`);
    }
    return answer;
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

function headersOf(headers: Record<string, string | string[] | undefined>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(headers)) out[key] = Array.isArray(value) ? value[0] : value;
  return out;
}
