import { CommaList } from '../comma-list';

/** A host name or IPv4 address: labels of letters, digits, `-` and `_`, dot-separated. */
const HOST = /^[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?)*$/;
/** An IPv6 literal in brackets, as gRPC targets write it. */
const BRACKETED_IPV6 = /^\[[0-9A-Fa-f:.]+\]$/;

/**
 * Why `address` is not `host:port` with a port of 1–65535, or undefined when it is. `ipv6` admits a bracketed IPv6
 * literal as the host.
 */
export function hostPortProblem(address: string, { ipv6 = false } = {}): string | undefined {
  const colon = address.lastIndexOf(':');
  if (colon < 0) return `"${address}" has no port (host:port)`;
  const host = address.slice(0, colon);
  const port = address.slice(colon + 1);
  if (!HOST.test(host) && !(ipv6 && BRACKETED_IPV6.test(host))) {
    return `"${address}" has no valid host (host:port, no scheme)`;
  }
  if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    return `"${address}" has no port of 1-65535`;
  }
  return undefined;
}

/**
 * `KAFKA_BROKERS`: comma-separated `host:port` bootstrap addresses, as an array. kafkajs takes any string and retries
 * what it cannot reach for ever, so a value like `3.9.1` (no port) would leave a service never ready; it is refused
 * at start instead, naming the entry.
 */
export const BrokerList = CommaList.superRefine((brokers, ctx) => {
  if (brokers.length === 0) ctx.addIssue({ code: 'custom', message: 'must name at least one broker, host:port' });
  for (const broker of brokers) {
    // kafkajs splits a broker address at its first `:`, so an IPv6 literal cannot be given (a name resolving to one
    // can).
    const problem = hostPortProblem(broker);
    if (problem) ctx.addIssue({ code: 'custom', message: `must be comma-separated host:port: ${problem}` });
  }
});
