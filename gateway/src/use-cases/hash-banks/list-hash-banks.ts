import type { HashBankView } from '../../routes/hash-banks/hash-banks.schema';
import { callFor, toBankView, type BankCaller } from './views';

/** The tenant's hash banks, oldest first. */
export async function listHashBanks(caller: BankCaller): Promise<HashBankView[]> {
  const { banks } = await callFor(caller, 'listHashBanks', {});
  return banks.map(toBankView);
}
