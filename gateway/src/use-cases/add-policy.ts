import { LIMITS, type Policy } from '@vigil/proto';
import { ConflictError, LimitExceededError } from '../errors';
import type { ConfigStore } from '../store/config-store';

/** Adds a policy to the tenant's list (API and console): 409 when its id is taken, limit_exceeded past the bound. */
export async function addPolicy(store: ConfigStore, tenantId: string, policy: Policy): Promise<void> {
  await store.changePolicies(tenantId, (current) => {
    if (current.some((stored) => stored.id === policy.id)) {
      throw new ConflictError('a policy with this id exists', { id: policy.id });
    }
    if (current.length >= LIMITS.policies) {
      throw new LimitExceededError(`at most ${LIMITS.policies} policies`, { limit: LIMITS.policies });
    }
    return [...current, policy];
  });
}
