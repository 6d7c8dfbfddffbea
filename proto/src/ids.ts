import { createHash } from 'node:crypto';

/**
 * Record and user ids are derived from (tenant, clientId) so the gateway can return them before the moderator has
 * processed anything, and so a re-ingest lands on the same stream. Hex of SHA-256, truncated to 128 bits.
 */
function derive(prefix: string, tenantId: string, clientId: string): string {
  const digest = createHash('sha256').update(tenantId).update('\u0000').update(clientId).digest('hex');
  return `${prefix}_${digest.slice(0, 32)}`;
}

export const recordIdFor = (tenantId: string, clientId: string): string => derive('rec', tenantId, clientId);
export const userIdFor = (tenantId: string, clientId: string): string => derive('usr', tenantId, clientId);

/** Stream names of the event store: one per record and one per user. */
export const recordStream = (recordId: string): string => `record-${recordId}`;
export const userStream = (userId: string): string => `user-${userId}`;
