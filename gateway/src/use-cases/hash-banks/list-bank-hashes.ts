import type { BankHashView } from '../../routes/hash-banks/hash-banks.schema';
import { callFor, toHashView, type BankCaller } from './views';

/** A page of a bank's hashes, by id. */
export async function listBankHashes(
  caller: BankCaller,
  bankId: string,
  page: { limit: number; startingAfter?: string },
): Promise<{ hashes: BankHashView[]; hasMore: boolean }> {
  const result = await callFor(caller, 'listBankHashes', {
    bankId,
    limit: page.limit,
    startingAfter: page.startingAfter ?? '',
  });
  return { hashes: result.hashes.map(toHashView), hasMore: result.hasMore };
}
