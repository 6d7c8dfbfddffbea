import { callFor, type BankCaller } from './views';

/**
 * Releases a quarantined hash: it acts again, and its held matches are applied to their records as moderations
 * (never over a person's decision).
 */
export async function releaseHashQuarantine(
  caller: BankCaller,
  hashId: string,
): Promise<{ applied: number; skipped: number }> {
  const { applied, skipped } = await callFor(caller, 'releaseHashQuarantine', { hashId });
  return { applied, skipped };
}
