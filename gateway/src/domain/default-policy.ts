import { DEFAULT_POLICY, type Policy } from '@vigil/proto';

/** The tenant's policy list with the default first when the tenant has not replaced it: what the API lists. */
export function withDefaultPolicy(policies: readonly Policy[]): Policy[] {
  return policies.some((policy) => policy.id === 'default') ? [...policies] : [DEFAULT_POLICY, ...policies];
}
