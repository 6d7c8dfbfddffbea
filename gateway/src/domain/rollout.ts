import { createHash } from 'node:crypto';

/**
 * Whether the roll-out samples this record in. Deterministic per tenant and clientId (not Iffy's `Math.random()`), so
 * a client's retry of the same ingest and every re-delivery agree, and raising the percentage only adds records: the
 * records in at 10 % are still in at 20 %.
 */
export function inRollout(tenantId: string, clientId: string, percentage: number): boolean {
  if (percentage >= 100) return true;
  if (percentage <= 0) return false;
  const digest = createHash('sha256').update(tenantId).update('\0').update(clientId).digest();
  // The first 32 bits spread uniformly over [0, 100).
  return (digest.readUInt32BE(0) / 2 ** 32) * 100 < percentage;
}
