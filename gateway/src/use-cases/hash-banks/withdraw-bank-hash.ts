import { callFor, type BankCaller } from './views';

/** A withdrawal (as StopNCII sends them): the hash is deleted from the store and from every moderator's index. */
export async function withdrawBankHash(caller: BankCaller, bankId: string, hashId: string): Promise<void> {
  await callFor(caller, 'withdrawBankHash', { bankId, hashId });
}
