import type { BankHashView, ImportHashesBody } from '../../routes/hash-banks/hash-banks.schema';
import { callFor, toHashView, type BankCaller } from './views';

/** Imports a hash file in HMA's CSV format; a bad row fails the import with its line number. */
export async function importBankHashes(
  caller: BankCaller,
  bankId: string,
  input: ImportHashesBody,
): Promise<{ added: BankHashView[]; duplicates: number }> {
  const result = await callFor(caller, 'addBankHashes', { bankId, csv: input.csv });
  return { added: result.added.map(toHashView), duplicates: result.duplicates };
}
