import { ConflictError, NotFoundError } from '../errors';
import type { ConfigStore } from '../store/config-store';

/**
 * Deletes one of the tenant's policies: refused while a rule of the live rule set names it (its flags would fall back
 * to the default policy unnoticed). Deleting `default` restores the built-in one.
 */
export async function deletePolicy(store: ConfigStore, tenantId: string, id: string): Promise<void> {
  const live = await store.getRules(tenantId);
  const naming = live.rules.filter((rule) => rule.policy === id).map((rule) => rule.id);
  if (naming.length > 0 && id !== 'default') {
    throw new ConflictError('rules of the live rule set name this policy', { rules: naming });
  }
  await store.changePolicies(tenantId, (current) => {
    if (!current.some((stored) => stored.id === id)) throw new NotFoundError('policy not found');
    return current.filter((stored) => stored.id !== id);
  });
}
