import { lookup } from 'node:dns/promises';
import { addressPolicy, hasCredentials, literalHost } from '@vigil/proto';
import { UnavailableError, ValidationError } from '../../errors';

/** Every address a host name resolves to (`dns.lookup` with `all`, as the notifier's socket resolves it). */
export type ResolveHost = (hostname: string) => Promise<Array<{ address: string }>>;

const systemResolve: ResolveHost = (hostname) => lookup(hostname, { all: true, verbatim: true });

/**
 * Answers of the resolver that mean the name does not exist or cannot be one (as opposed to the resolver being
 * unreachable): `getaddrinfo` answers EINVAL for a name DNS cannot carry.
 */
const NO_SUCH_HOST = new Set(['ENOTFOUND', 'ENODATA', 'EAI_NONAME', 'EAI_NODATA', 'EINVAL']);

/** What is wrong with a host name DNS cannot carry (RFC 1035: 253 characters without the final dot, labels 1–63). */
function nameProblem(hostname: string): string | undefined {
  const name = hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
  if (name.length > 253) return 'the host name is longer than 253 characters';
  if (name.split('.').some((label) => label.length === 0 || label.length > 63)) {
    return 'the host name has an empty label or a label longer than 63 characters';
  }
  return undefined;
}

interface UrlCheckOptions {
  /** The body field the URL came in, named by the error's details. Default `url`. */
  field?: string;
  /** What the URL is, in the error's message. Default `webhook url`. */
  name?: string;
  /**
   * Plain http only to addresses inside the allow-list (local receivers in tests), https to any other: for an
   * address a token is sent to (the Transparency Database). Default false (webhooks are signed, not secret).
   */
  httpsOnly?: boolean;
}

export interface EndpointUrlGuard {
  /** Throws ValidationError (400) naming the field when the URL's host is or resolves to a refused address. */
  check(url: string, options?: UrlCheckOptions): Promise<void>;
}

/**
 * Registration-time check of a webhook URL (and of the Transparency Database address, which the notifier reaches under
 * the same rules), with the notifier's rules (`addressPolicy` from the contracts, the same `WEBHOOK_ALLOWED_CIDRS`): a
 * URL with credentials is refused, and loopback, private, link-local, metadata and other non-public addresses are
 * refused, by IP literal or by name. It tells the client at once what delivery would refuse; it is not the guard
 * itself, since DNS answers change: the notifier checks every connection again.
 */
export function endpointUrlGuard(options: {
  allowedCidrs: readonly string[];
  resolve?: ResolveHost;
  timeoutMs?: number;
}): EndpointUrlGuard {
  const policy = addressPolicy(options.allowedCidrs);
  const resolve = options.resolve ?? systemResolve;
  const timeoutMs = options.timeoutMs ?? 5000;

  const resolveWithin = async (hostname: string) => {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        resolve(hostname),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(Object.assign(new Error('lookup timed out'), { code: 'ETIMEOUT' })),
            timeoutMs,
          );
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  };

  return {
    async check(url, options = {}) {
      const field = options.field ?? 'url';
      const invalid = `invalid ${options.name ?? 'webhook url'}`;
      const refused = (message: string) => new ValidationError(invalid, [{ path: [field], message }]);
      const parsed = new URL(url);
      const plain = options.httpsOnly === true && parsed.protocol !== 'https:';
      const plainRefused = () => refused('must be https (plain http only to an address in WEBHOOK_ALLOWED_CIDRS)');
      // Credentials would travel with every delivery, in a URL stored and shown in clear.
      if (hasCredentials(parsed)) throw refused('must not contain a user name or password');
      const literal = literalHost(parsed);
      if (literal !== undefined) {
        if (!policy.allowed(literal)) throw refused('the host is a loopback, private, link-local or metadata address');
        if (plain && !policy.listed(literal)) throw plainRefused();
        return;
      }
      const problem = nameProblem(parsed.hostname);
      if (problem !== undefined) throw refused(problem);
      let addresses: Array<{ address: string }>;
      try {
        addresses = await resolveWithin(parsed.hostname);
      } catch (err) {
        if (NO_SUCH_HOST.has((err as { code?: string }).code ?? '')) throw refused('the host does not resolve');
        throw new UnavailableError('the webhook host could not be resolved, try again', undefined, { cause: err });
      }
      if (addresses.length === 0) throw refused('the host does not resolve');
      if (addresses.some((entry) => !policy.allowed(entry.address))) {
        throw refused('the host resolves to a loopback, private, link-local or metadata address');
      }
      if (plain && addresses.some((entry) => !policy.listed(entry.address))) throw plainRefused();
    },
  };
}
