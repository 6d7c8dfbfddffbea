import type { BankHashView, UpdateHashBody } from '../../routes/hash-banks/hash-banks.schema';
import { callFor, toHashView, type BankCaller } from './views';

/** Enables or disables a hash, confirms or deconfirms it, or replaces its metadata. */
export async function updateBankHash(
  caller: BankCaller,
  bankId: string,
  hashId: string,
  patch: UpdateHashBody,
): Promise<BankHashView> {
  const hash = await callFor(caller, 'updateBankHash', {
    bankId,
    hashId,
    enabled: patch.enabled,
    review: patch.review,
    metadataJson: patch.metadata ? JSON.stringify(patch.metadata) : undefined,
  });
  return toHashView(hash);
}
