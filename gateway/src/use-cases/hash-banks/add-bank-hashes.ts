import type { AddHashesBody, BankHashView } from '../../routes/hash-banks/hash-banks.schema';
import { callFor, toHashView, type BankCaller } from './views';

/** Adds hashes one by one, each with its metadata; all or none (a hash of the wrong kind fails them all). */
export async function addBankHashes(
  caller: BankCaller,
  bankId: string,
  input: AddHashesBody,
): Promise<{ added: BankHashView[]; duplicates: number }> {
  const result = await callFor(caller, 'addBankHashes', {
    bankId,
    hashes: input.hashes.map((hash) => ({ value: hash.hash, metadataJson: JSON.stringify(hash.metadata ?? {}) })),
  });
  return { added: result.added.map(toHashView), duplicates: result.duplicates };
}
