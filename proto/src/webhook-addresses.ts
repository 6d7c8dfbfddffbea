import ipaddr from 'ipaddr.js';
import { CommaList } from './comma-list';

/**
 * Where webhooks may be sent: the one rule the gateway applies when an endpoint is registered and the notifier applies
 * on every connection (after its own resolution, so DNS rebinding gains nothing).
 */
export interface AddressPolicy {
  allowed(address: string): boolean;
  /**
   * Whether the address is inside the operator's allow-list (and not a metadata address): the addresses opened for
   * local receivers, which may be reached without TLS where https is otherwise required.
   */
  listed(address: string): boolean;
}

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Cloud metadata services: refused whatever ipaddr.js calls their range, and whatever the allow-list says. */
const METADATA: Range[] = [ipaddr.parseCIDR('169.254.169.254/32'), ipaddr.parseCIDR('fd00:ec2::254/128')];

/** Only public unicast is reachable by default; ipaddr.js names every other range (loopback, private, linkLocal, …). */
const PUBLIC_RANGES = new Set(['unicast']);

function isCidr(value: string): boolean {
  try {
    ipaddr.parseCIDR(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * An IPv6 address that embeds an IPv4 one as the IPv4 address: IPv4-mapped (`::ffff:10.0.0.1`) and IPv4-compatible
 * (`::10.0.0.1`, which URL parsing writes `::a00:1`). Both reach the IPv4 host on common stacks, and ipaddr.js calls
 * an IPv4-compatible address plain unicast, so `http://[::169.254.169.254]/` would otherwise pass as public. `::` and
 * `::1` keep their IPv6 meaning (unspecified, loopback).
 */
function embeddedIpv4(ip: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  if (ip.kind() === 'ipv4') return ip;
  const v6 = ip as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address();
  const parts = v6.parts;
  const compatible = parts.slice(0, 6).every((part) => part === 0) && (parts[6] !== 0 || (parts[7] ?? 0) > 1);
  return compatible ? ipaddr.fromByteArray(v6.toByteArray().slice(12)) : v6;
}

/**
 * Public unicast addresses, plus those inside `allowedCidrs` (`WEBHOOK_ALLOWED_CIDRS`), except the metadata addresses,
 * which no allow-list opens.
 */
export function addressPolicy(allowedCidrs: readonly string[]): AddressPolicy {
  const allowList: Range[] = allowedCidrs.map((cidr) => ipaddr.parseCIDR(cidr));
  const within = (ip: ipaddr.IPv4 | ipaddr.IPv6, ranges: Range[]) =>
    ranges.some(([range, bits]) => range.kind() === ip.kind() && ip.match([range, bits] as never));
  const judge = (address: string): 'refused' | 'listed' | 'public' => {
    if (!ipaddr.isValid(address)) return 'refused';
    const ip = embeddedIpv4(ipaddr.parse(address));
    if (within(ip, METADATA)) return 'refused';
    if (within(ip, allowList)) return 'listed';
    return PUBLIC_RANGES.has(ip.range()) ? 'public' : 'refused';
  };
  return {
    allowed: (address) => judge(address) !== 'refused',
    listed: (address) => judge(address) === 'listed',
  };
}

/** Whether a URL carries credentials (`http://user:pass@host/`): webhook URLs must not. */
export function hasCredentials(url: URL): boolean {
  return url.username !== '' || url.password !== '';
}

/** The host of a URL as an IP literal (brackets of IPv6 removed), or undefined for a name. */
export function literalHost(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return ipaddr.isValid(host) ? host : undefined;
}

/**
 * A comma-separated list of CIDRs from the environment (`WEBHOOK_ALLOWED_CIDRS`, read by the gateway and the
 * notifier alike), as an array; refused unless every entry is a CIDR.
 */
export const CidrList = CommaList.refine(
  (cidrs) => cidrs.every(isCidr),
  'must be comma-separated CIDRs, e.g. 10.0.0.0/8,127.0.0.1/32',
);
