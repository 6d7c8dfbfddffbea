import type { CreateHashBankBody, HashBankView } from '../../routes/hash-banks/hash-banks.schema';
import { callFor, toBankView, type BankCaller } from './views';

/** Creates a hash bank (the moderator checks the policy and the tenant's bank limit). */
export async function createHashBank(caller: BankCaller, input: CreateHashBankBody): Promise<HashBankView> {
  const bank = await callFor(caller, 'createHashBank', {
    name: input.name,
    description: input.description,
    kind: input.kind,
    distance: input.distance,
    policyId: input.policy,
    action: input.action,
    negative: input.negative,
    enabled: input.enabled,
    ...(input.flood ? { floodThreshold: input.flood.threshold, floodWindowSeconds: input.flood.windowSeconds } : {}),
  });
  return toBankView(bank);
}
