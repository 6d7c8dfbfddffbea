import { callFor, type BankCaller } from './views';

/** Deletes a feed; the hashes it brought stay in the bank. */
export async function deleteHashFeed(caller: BankCaller, bankId: string, feedId: string): Promise<void> {
  await callFor(caller, 'deleteHashFeed', { bankId, feedId });
}
