import type { HashQuarantineView } from '../../routes/hash-banks/hash-banks.schema';
import { callFor, toQuarantineView, type BankCaller } from './views';

/** The tenant's hashes in flood quarantine (and releases still applying), oldest first. */
export async function listHashQuarantines(caller: BankCaller): Promise<HashQuarantineView[]> {
  const { quarantines } = await callFor(caller, 'listHashQuarantines', {});
  return quarantines.map(toQuarantineView);
}
