import { DEFAULT_RULES, RuleSet, type Rule } from '@vigil/proto/rules';
import { InvalidRuleSetError, NotFoundError, PromptRulesDisabledError, UnknownRuleVersionError } from '../errors';
import type { UseCaseDeps } from './deps';

/** Whether a rule set needs the moderator's LLM (a prompt strategy in any rule, enabled or not). */
function usesPrompts(ruleSet: RuleSet): boolean {
  return ruleSet.rules.some((rule) => rule.strategies.some((strategy) => strategy.type === 'prompt'));
}

// The checks a rule set passes before it is stored, promoted, backtested or run in shadow: shared by the use cases
// that take a rule set version, the API's rule routes and the console's rule pages.

/** Without an LLM a prompt strategy could never flag: refuse it rather than store a rule that silently does nothing. */
export function refuseUnjudgeable(deps: Pick<UseCaseDeps, 'promptRulesEnabled'>, ruleSet: RuleSet): void {
  if (!deps.promptRulesEnabled && usesPrompts(ruleSet)) {
    throw new PromptRulesDisabledError(
      'prompt strategies are not available: this deployment has no LLM configured (PROMPT_RULES_ENABLED)',
    );
  }
}

/** The rules of a version, checked as a rule set written today would be; the API's errors when not. */
export async function candidateRules(
  deps: Pick<UseCaseDeps, 'configStore' | 'promptRulesEnabled'>,
  tenantId: string,
  version: number,
): Promise<Rule[]> {
  let rules: Rule[];
  if (version === 0) rules = DEFAULT_RULES.rules;
  else {
    try {
      rules = (await deps.configStore.versionOf(tenantId, version)).rules;
    } catch (err) {
      if (err instanceof NotFoundError)
        throw new UnknownRuleVersionError('the tenant has no rule set version with this number', { version });
      throw err;
    }
  }
  const checked = RuleSet.safeParse({ rules });
  if (!checked.success) {
    throw new InvalidRuleSetError('the rule set version no longer passes the checks of a rule set', {
      version,
      issues: checked.error.issues.map((issue) => ({ path: issue.path, message: issue.message })),
    });
  }
  refuseUnjudgeable(deps, checked.data);
  return checked.data.rules;
}
