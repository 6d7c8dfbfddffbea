// What the moderator applies to hash banks and their matches: the text form of each hash kind, a bank's flood
// quarantine, whether and how a match acts, and a quarantined hash's stream (the shared shapes are in @vigil/proto).
import type { HashKind, HashMatchRecord } from '@vigil/proto';

/**
 * A bank's flood quarantine (docs/hash-banks.md, "Flood quarantine"): a hash that matches more than `threshold` times
 * in one window of `windowSeconds` stops acting and is held for review. Absent on a bank: off.
 */
export interface FloodLimit {
  threshold: number;
  windowSeconds: number;
}

/** The text form of each kind: lowercase hex of 256, 128 and 256 bits. */
export const HASH_PATTERN: Record<HashKind, RegExp> = {
  pdq: /^[0-9a-f]{64}$/,
  md5: /^[0-9a-f]{32}$/,
  sha256: /^[0-9a-f]{64}$/,
};

/** Whether a match acts (flags, suspends): neither cancelled by a negative bank nor held by a flood quarantine. */
export function acts(match: Pick<HashMatchRecord, 'cancelledBy' | 'quarantined'>): boolean {
  return match.cancelledBy === undefined && match.quarantined !== true;
}

/** The match that suspends the record's user: the first acting match of a `flag_and_suspend` bank. */
export function suspendingMatch(matches: readonly HashMatchRecord[] | undefined): HashMatchRecord | undefined {
  return matches?.find((match) => match.action === 'flag_and_suspend' && acts(match));
}

/** The stream of a hash's `HashQuarantined` events: one a quarantine, numbered from 1. */
export const hashStreamOf = (tenantId: string, hashId: string): string => `hash-${tenantId}-${hashId}`;

/** The reason a bank match gives, naming the bank and the distance (the metadata is on the match). */
export function hashReason(match: Pick<HashMatchRecord, 'position' | 'bankName' | 'bankId' | 'kind' | 'distance'>) {
  return `Image ${match.position} matched hash bank "${match.bankName}" (${match.bankId}, ${match.kind} distance ${match.distance})`;
}
