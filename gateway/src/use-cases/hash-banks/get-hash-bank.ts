import type { HashBankDetail } from '../../routes/hash-banks/hash-banks.schema';
import { callFor, toBankView, toRetroPassView, type BankCaller } from './views';

/** A bank of the caller's tenant, with its newest retroactive pass. */
export async function getHashBank(caller: BankCaller, bankId: string): Promise<HashBankDetail> {
  const bank = await callFor(caller, 'getHashBank', { bankId });
  return { ...toBankView(bank), lastRetroPass: bank.lastRetroPass ? toRetroPassView(bank.lastRetroPass) : null };
}
