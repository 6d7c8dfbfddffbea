import { callFor, type BankCaller } from './views';

/** Dismisses a quarantined hash: its held matches are dropped and it stays disabled in its bank. */
export async function dismissHashQuarantine(caller: BankCaller, hashId: string): Promise<{ dropped: number }> {
  const { dropped } = await callFor(caller, 'dismissHashQuarantine', { hashId });
  return { dropped };
}
