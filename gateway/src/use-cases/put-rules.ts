import type { RuleSet } from '@vigil/proto/rules';
import type { LiveRules, RulesWrite } from '../store/config-store';
import type { UseCaseDeps } from './deps';
import { refuseUnjudgeable } from './rule-checks';

/** Replaces the tenant's rule set: a new version, live at once. */
export function putRules(
  deps: Pick<UseCaseDeps, 'configStore' | 'promptRulesEnabled'>,
  tenantId: string,
  ruleSet: RuleSet,
  write: RulesWrite,
): Promise<LiveRules> {
  refuseUnjudgeable(deps, ruleSet);
  return deps.configStore.putRules(tenantId, ruleSet, write);
}
