import type { Rule, RuleSet } from '@vigil/proto/rules';

/** The strategies a shadow rule runs: local text matching only, so shadow work costs no provider call or image fetch. */
const SHADOW_STRATEGIES: ReadonlySet<string> = new Set(['blocklist', 'patterns', 'links']);

export interface SplitRules {
  /** What judges: the rule set less its shadow rules (the same object when it has none). */
  live: RuleSet;
  /** The shadow rules, with their local strategies only; null when none has any. */
  shadow: RuleSet | null;
}

/** What a rule runs in shadow: its local strategies only, and not marked shadow (it judges nothing either way). */
function inShadow(rule: Rule): Rule {
  return { ...rule, shadow: false, strategies: rule.strategies.filter((s) => SHADOW_STRATEGIES.has(s.type)) };
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
      .map(inShadow)
      .filter((rule) => rule.strategies.length > 0);
    split = {
      live: { ...rules, rules: rules.rules.filter((rule) => !rule.shadow) },
      shadow: shadow.length > 0 ? { ...rules, rules: shadow } : null,
    };
  }
  splits.set(rules, split);
  return split;
}

const versions = new WeakMap<RuleSet, RuleSet | null>();

/**
 * A whole rule set version run in shadow (docs/rules-safely.md, "Shadow versions"): every enabled rule, shadow or
 * not, with the same local strategies as a shadow rule; null when none has any. Cached per rule set object, as above.
 */
export function shadowVersionRules(rules: RuleSet): RuleSet | null {
  const cached = versions.get(rules);
  if (cached !== undefined) return cached;
  const kept = rules.rules
    .filter((rule) => rule.enabled !== false)
    .map(inShadow)
    .filter((rule) => rule.strategies.length > 0);
  const shadow = kept.length > 0 ? { ...rules, rules: kept } : null;
  versions.set(rules, shadow);
  return shadow;
}
