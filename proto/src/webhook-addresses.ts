import { z } from 'zod';
import ipaddr from 'ipaddr.js';

/**
 * Where webhooks may be sent: the one rule the gateway applies when an endpoint is registered and the notifier applies
 * on every connection (after its own resolution, so DNS rebinding gains nothing).
 */
export interface AddressPolicy {
  allowed(address: string): boolean;
}

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Cloud metadata services: refused whatever ipaddr.js calls their range, and whatever the allow-list says. */
const METADATA: Range[] = [ipaddr.parseCIDR('169.254.169.254/32'), ipaddr.parseCIDR('fd00:ec2::254/128')];

/** Only public unicast is reachable by default; ipaddr.js names every other range (loopback, private, linkLocal, …). */
const PUBLIC_RANGES = new Set(['unicast']);

export function isCidr(value: string): boolean {
  try {
    ipaddr.parseCIDR(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * Public unicast addresses, plus those inside `allowedCidrs` (`WEBHOOK_ALLOWED_CIDRS`), except the metadata addresses,
 * which no allow-list opens.
 */
export function addressPolicy(allowedCidrs: readonly string[]): AddressPolicy {
  const allowList: Range[] = allowedCidrs.map((cidr) => ipaddr.parseCIDR(cidr));
  const within = (ip: ipaddr.IPv4 | ipaddr.IPv6, ranges: Range[]) =>
    ranges.some(([range, bits]) => range.kind() === ip.kind() && ip.match([range, bits] as never));
  return {
    allowed(address) {
      if (!ipaddr.isValid(address)) return false;
      // ::ffff:10.0.0.1 must be judged as 10.0.0.1.
      const ip = ipaddr.process(address);
      if (within(ip, METADATA)) return false;
      if (within(ip, allowList)) return true;
      return PUBLIC_RANGES.has(ip.range());
    },
  };
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
export const CidrList = z
  .string()
  .transform((value) =>
    value
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  )
  .refine((cidrs) => cidrs.every(isCidr), 'must be comma-separated CIDRs, e.g. 10.0.0.0/8,127.0.0.1/32');
