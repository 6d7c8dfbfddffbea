import type { LiveRules, RulesWrite } from '../store/config-store';
import type { UseCaseDeps } from './deps';
import { refuseUnjudgeable } from './rule-checks';

/** Makes an earlier version's rules live again, as a new version that names it (`basedOn`). */
export function rollBackVersion(
  deps: Pick<UseCaseDeps, 'configStore' | 'promptRulesEnabled'>,
  tenantId: string,
  version: number,
  write: RulesWrite,
): Promise<LiveRules> {
  return deps.configStore.rollBack(tenantId, version, write, (ruleSet) => refuseUnjudgeable(deps, ruleSet));
}
