import type { UseCaseDeps } from './deps';
import { candidateRules, refuseUnjudgeable } from './rule-checks';

/**
 * Sets the tenant's shadow version, or none: the moderator runs it beside the live set on live traffic, without
 * acting (docs/rules-safely.md, "Shadow versions"). Used by the API and the console.
 */
export async function setShadowVersion(
  deps: Pick<UseCaseDeps, 'configStore' | 'promptRulesEnabled'>,
  tenantId: string,
  version: number | null,
): Promise<number | null> {
  // The checks of a backtest's version: it exists (422 unknown_rule_version) and passes today's checks.
  if (version !== null) await candidateRules(deps, tenantId, version);
  return deps.configStore.setShadowVersion(tenantId, version, (ruleSet) => refuseUnjudgeable(deps, ruleSet));
}
