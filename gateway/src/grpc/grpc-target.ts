import { hostPortProblem } from '@vigil/proto/platform';
import { z } from 'zod';

/**
 * A gRPC target the gateway can balance over (`MODERATOR_ADDRESS`): `host:port`, or with the DNS resolver named,
 * `dns:///host:port` or `dns://authority/host:port`, or a fixed list of addresses, `ipv4:a:port,b:port` (gRPC's
 * `ipv4:`/`ipv6:` schemes, which a local run of several moderators uses). Without a port gRPC would dial 443, so one
 * is required.
 */
export const GrpcTarget = z.string().superRefine((target, ctx) => {
  const list = /^(ipv4|ipv6):(.*)$/.exec(target);
  const addresses = list ? (list[2] ?? '').split(',') : [/^dns:(?:\/\/[^/]*\/)?(.*)$/.exec(target)?.[1] ?? target];
  for (const address of addresses) {
    const problem = hostPortProblem(address, { ipv6: list?.[1] !== 'ipv4' });
    if (problem) {
      ctx.addIssue({
        code: 'custom',
        message: `must be host:port, dns:///host:port or ipv4:host:port,…: ${problem}`,
      });
    }
  }
});
