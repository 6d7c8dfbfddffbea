import { isDeepStrictEqual } from 'node:util';
import type { Rule } from '@vigil/proto/rules';

export interface RuleSetDiff {
  added: Rule[];
  removed: Rule[];
  changed: { id: string; from: Rule; to: Rule }[];
  unchanged: string[];
}

/** What changes from one rule set to another, rule by rule (by id), in the order of `to` (removed: of `from`). */
export function diffRuleSets(from: readonly Rule[], to: readonly Rule[]): RuleSetDiff {
  const before = new Map(from.map((rule) => [rule.id, rule]));
  const after = new Set(to.map((rule) => rule.id));
  const diff: RuleSetDiff = { added: [], removed: [], changed: [], unchanged: [] };
  for (const rule of to) {
    const earlier = before.get(rule.id);
    if (!earlier) diff.added.push(rule);
    else if (isDeepStrictEqual(earlier, rule)) diff.unchanged.push(rule.id);
    else diff.changed.push({ id: rule.id, from: earlier, to: rule });
  }
  for (const rule of from) if (!after.has(rule.id)) diff.removed.push(rule);
  return diff;
}
