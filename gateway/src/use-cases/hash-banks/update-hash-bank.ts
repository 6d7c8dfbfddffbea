import type { HashBankView, UpdateHashBankBody } from '../../routes/hash-banks/hash-banks.schema';
import { callFor, toBankView, type BankCaller } from './views';

/** Changes a bank: the fields given replace the stored ones (`null` removes the description or the policy). */
export async function updateHashBank(
  caller: BankCaller,
  bankId: string,
  patch: UpdateHashBankBody,
): Promise<HashBankView> {
  const bank = await callFor(caller, 'updateHashBank', {
    bankId,
    name: patch.name,
    description: patch.description ?? undefined,
    clearDescription: patch.description === null,
    distance: patch.distance,
    policyId: patch.policy ?? undefined,
    clearPolicy: patch.policy === null,
    action: patch.action,
    negative: patch.negative,
    enabled: patch.enabled,
    floodThreshold: patch.flood?.threshold,
    floodWindowSeconds: patch.flood?.windowSeconds,
    clearFlood: patch.flood === null,
  });
  return toBankView(bank);
}
