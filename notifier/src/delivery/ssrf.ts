import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { addressPolicy, hasCredentials, literalHost, type AddressPolicy } from '@vigil/proto';

/**
 * Thrown (also through the socket's lookup) when a webhook URL points where the notifier must not connect. A refused
 * attempt is recorded as `ssrf_refused` and retried like any failure rather than failed at once: DNS answers and the
 * allow-list can change, and the failing-endpoint window disables an endpoint that stays refused.
 */
export class SsrfRefusedError extends Error {
  readonly code = 'ERR_SSRF_REFUSED';
  constructor(readonly address: string) {
    super('webhook address refused');
    this.name = 'SsrfRefusedError';
  }
}

export { addressPolicy, type AddressPolicy };

/**
 * Checks what a URL says before any connection: it carries no credentials (a URL registered before they were refused
 * is not sent with them), and a host that is an IP literal is allowed (the socket does no lookup for those; an
 * IPv4-mapped or IPv4-compatible IPv6 literal is judged as its IPv4 address). Names are checked at lookup.
 */
export function checkLiteralHost(url: URL, policy: AddressPolicy): void {
  if (hasCredentials(url)) throw new SsrfRefusedError('credentials in url');
  const host = literalHost(url);
  if (host !== undefined && !policy.allowed(host)) throw new SsrfRefusedError(host);
}

/**
 * A `lookup` for the HTTP agent: resolves every address and refuses the connection if any is off limits, then hands
 * the checked addresses to the socket, so the address connected to is the one checked (no DNS rebinding window).
 */
export function guardedLookup(policy: AddressPolicy): LookupFunction {
  return ((hostname: string, options: object, callback: (...args: unknown[]) => void) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err);
      const refused = addresses.find((entry) => !policy.allowed(entry.address));
      if (refused) return callback(new SsrfRefusedError(refused.address));
      if ((options as { all?: boolean }).all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error('no address'), { code: 'ENOTFOUND' }));
      callback(null, first.address, first.family);
    });
  }) as LookupFunction;
}
