import type { RuleSet } from '@vigil/proto/rules';
import type { RulesWrite } from '../store/config-store';
import type { RuleVersionDoc } from '../store/rule-version-store';
import type { UseCaseDeps } from './deps';
import { refuseUnjudgeable } from './rule-checks';

/** Saves a rule set as a draft version: it judges nothing until promoted. */
export function saveDraft(
  deps: Pick<UseCaseDeps, 'configStore' | 'promptRulesEnabled'>,
  tenantId: string,
  ruleSet: RuleSet,
  write: RulesWrite,
): Promise<RuleVersionDoc> {
  refuseUnjudgeable(deps, ruleSet);
  return deps.configStore.saveDraft(tenantId, ruleSet, write);
}
