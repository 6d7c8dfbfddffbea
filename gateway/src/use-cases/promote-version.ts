import type { LiveRules } from '../store/config-store';
import type { UseCaseDeps } from './deps';
import { refuseUnjudgeable } from './rule-checks';

/** Makes a draft version the live rule set (409 conflict for a version that is not a draft). */
export function promoteVersion(
  deps: Pick<UseCaseDeps, 'configStore' | 'promptRulesEnabled'>,
  tenantId: string,
  version: number,
): Promise<LiveRules> {
  return deps.configStore.promote(tenantId, version, (ruleSet) => refuseUnjudgeable(deps, ruleSet));
}
