import type { HashBankView } from '../../routes/hash-banks/hash-banks.schema';
import { callFor, toBankView, type BankCaller } from './views';

export async function getHashBank(caller: BankCaller, bankId: string): Promise<HashBankView> {
  return toBankView(await callFor(caller, 'getHashBank', { bankId }));
}
