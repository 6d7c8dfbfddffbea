import type { Rule, RuleSet } from '@vigil/proto';

/** The strategies a shadow rule runs: local text matching only, so shadow work costs no provider call or image fetch. */
const SHADOW_STRATEGIES: ReadonlySet<string> = new Set(['blocklist', 'patterns', 'links']);

export interface SplitRules {
  /** What judges: the rule set less its shadow rules (the same object when it has none). */
  live: RuleSet;
  /** The shadow rules, with their local strategies only; null when none has any. */
  shadow: RuleSet | null;
}

/** One split per rule set object: the tenant cache keeps the object while the set is unchanged, so the engine's
 * prepared sets stay prepared. */
const splits = new WeakMap<RuleSet, SplitRules>();

/** A rule set's live rules and its shadow rules (docs/rules-safely.md, "Shadow rules"). */
export function splitRules(rules: RuleSet): SplitRules {
  const cached = splits.get(rules);
  if (cached) return cached;
  let split: SplitRules;
  if (!rules.rules.some((rule) => rule.shadow)) {
    split = { live: rules, shadow: null };
  } else {
    const shadow: Rule[] = rules.rules
      .filter((rule) => rule.shadow && rule.enabled !== false)
      .map((rule) => ({
        ...rule,
        shadow: false,
        strategies: rule.strategies.filter((strategy) => SHADOW_STRATEGIES.has(strategy.type)),
      }))
      .filter((rule) => rule.strategies.length > 0);
    split = {
      live: { ...rules, rules: rules.rules.filter((rule) => !rule.shadow) },
      shadow: shadow.length > 0 ? { ...rules, rules: shadow } : null,
    };
  }
  splits.set(rules, split);
  return split;
}
