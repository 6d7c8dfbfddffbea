import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { hasCredentials, literalHost, type AddressPolicy } from '@vigil/proto';
import type * as Undici from 'undici';
import type { Dispatcher } from 'undici';

/** Why an image was not fetched: a bounded set (metric label, reason text). */
export type FetchFailure =
  'invalid_url' | 'refused' | 'timeout' | 'too_large' | 'not_an_image' | 'http_status' | 'network_error';

export type FetchedImage = { ok: true; bytes: Uint8Array; contentType: string } | { ok: false; failure: FetchFailure };

export interface ImageFetcherOptions {
  /** The webhook address policy (public unicast, plus IMAGE_ALLOWED_CIDRS, never metadata addresses). */
  policy: AddressPolicy;
  /** Bytes of one image at most. */
  maxBytes: number;
}

export class RefusedAddress extends Error {
  readonly code = 'ERR_IMAGE_ADDRESS_REFUSED';
}

/**
 * A `lookup` for the agent: resolves every address and refuses the connection if any is off limits, then hands the
 * checked addresses to the socket, so the address connected to is the one checked (no DNS rebinding window).
 */
function guardedLookup(policy: AddressPolicy): LookupFunction {
  return ((hostname: string, options: object, callback: (...args: unknown[]) => void) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err);
      if (addresses.some((entry) => !policy.allowed(entry.address))) return callback(new RefusedAddress('refused'));
      if ((options as { all?: boolean }).all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error('no address'), { code: 'ENOTFOUND' }));
      callback(null, first.address, first.family);
    });
  }) as LookupFunction;
}

/**
 * Fetches record images under the same address policy as webhook delivery: http and https only, no credentials in
 * the URL, every resolved address checked and the checked one connected to, no redirect followed (a 3xx is a
 * failure), a content type that is an image, at most `maxBytes` (announced or read), within the caller's deadline.
 * The bytes stay in memory: never stored, logged or published.
 */
/**
 * A response's body, read whole unless its announced or actual length passes `maxBytes`: then it is dropped (the
 * connection destroyed) and the answer is undefined.
 */
export async function readWithin(
  response: Dispatcher.ResponseData,
  maxBytes: number,
): Promise<{ chunks: Buffer[]; size: number } | undefined> {
  const announced = Number(response.headers['content-length']);
  if (Number.isFinite(announced) && announced > maxBytes) {
    response.body.destroy();
    return undefined;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      response.body.destroy();
      return undefined;
    }
    chunks.push(chunk);
  }
  return { chunks, size };
}

let undici: typeof Undici | undefined;

/**
 * HTTP requests through an undici Agent that connects only where `policy` allows (guardedLookup). undici is loaded and
 * the agent made with the first request: undici's modules cost the moderator about 20 MB resident, and a deployment
 * whose records carry no image and whose tenants follow no hash feed never makes one.
 */
export class GuardedAgent {
  private agent?: Undici.Agent;

  constructor(private readonly policy: AddressPolicy) {}

  request(url: string | URL, options: Omit<Dispatcher.RequestOptions, 'origin' | 'path' | 'dispatcher'>) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    undici ??= require('undici') as typeof Undici;
    this.agent ??= new undici.Agent({ connect: { lookup: guardedLookup(this.policy) } });
    return undici.request(url, { ...options, dispatcher: this.agent });
  }

  close(): Promise<void> {
    return this.agent?.close() ?? Promise.resolve();
  }
}

export class ImageFetcher {
  private readonly agent: GuardedAgent;

  constructor(private readonly options: ImageFetcherOptions) {
    this.agent = new GuardedAgent(options.policy);
  }

  async fetch(url: string, signal: AbortSignal): Promise<FetchedImage> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return { ok: false, failure: 'invalid_url' };
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return { ok: false, failure: 'invalid_url' };
    if (hasCredentials(parsed)) return { ok: false, failure: 'refused' };
    const literal = literalHost(parsed);
    if (literal !== undefined && !this.options.policy.allowed(literal)) return { ok: false, failure: 'refused' };
    try {
      const response = await this.agent.request(parsed, {
        method: 'GET',
        headers: { accept: 'image/*' },
        signal,
      });
      // The deadline's signal may fire after the answer was given up; the body reports it as an error then.
      response.body.on('error', () => undefined);
      const close = () => response.body.destroy();
      if (response.statusCode < 200 || response.statusCode > 299) {
        close();
        return { ok: false, failure: 'http_status' };
      }
      const contentType = String(response.headers['content-type'] ?? '')
        .split(';')[0]!
        .trim()
        .toLowerCase();
      if (!contentType.startsWith('image/')) {
        close();
        return { ok: false, failure: 'not_an_image' };
      }
      const read = await readWithin(response, this.options.maxBytes);
      if (!read) return { ok: false, failure: 'too_large' };
      const { chunks, size } = read;
      // A buffer of its own (Buffer.concat may hand out a slice of Node's shared pool), so it can move to a worker.
      const bytes = new Uint8Array(size);
      let offset = 0;
      for (const chunk of chunks) {
        bytes.set(chunk, offset);
        offset += chunk.length;
      }
      return { ok: true, bytes, contentType };
    } catch (err) {
      if (signal.aborted) return { ok: false, failure: 'timeout' };
      if (err instanceof RefusedAddress || (err as { cause?: unknown }).cause instanceof RefusedAddress) {
        return { ok: false, failure: 'refused' };
      }
      return { ok: false, failure: 'network_error' };
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
