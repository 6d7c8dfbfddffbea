import type { Rule, RuleSet } from '@vigil/proto/rules';
import { CompiledRuleSets, estimatedBytes, planRuleSet } from './rule-set';

function ruleSet(word: string, extra: Partial<Rule> = {}): RuleSet {
  return {
    rules: [
      {
        id: 'words',
        name: 'Words',
        enabled: true,
        entities: [],
        strategies: [{ type: 'blocklist', words: [word], wholeWord: false, profanity: false }],
        ...extra,
      },
    ],
  };
}

describe('planRuleSet', () => {
  it.each([
    { name: 'the same object', second: (first: RuleSet) => first, same: true },
    { name: 'an equal object loaded again', second: () => ruleSet('alpha'), same: true },
    { name: 'a rule set with another word', second: () => ruleSet('beta'), same: false },
    { name: 'a rule set with the rule disabled', second: () => ruleSet('alpha', { enabled: false }), same: false },
  ])('gives the same key for $name: $same', ({ second, same }) => {
    const first = ruleSet('alpha');
    const plan = planRuleSet(first);
    expect(planRuleSet(second(first)).key === plan.key).toBe(same);
  });

  it('drops disabled rules and keeps entity scopes', () => {
    const plan = planRuleSet({
      rules: [
        ...ruleSet('a', { id: 'off', enabled: false }).rules,
        ...ruleSet('b', { id: 'on', entities: ['post'] }).rules,
      ],
    });
    expect(plan.rules.map((rule) => [rule.id, rule.entities && [...rule.entities]])).toEqual([['on', ['post']]]);
  });
});

describe('CompiledRuleSets', () => {
  it('keeps rule sets by estimated memory, dropping the least recently used first', () => {
    const sets = ['kept0', 'evict', 'third'].map((word) => planRuleSet(ruleSet(word)));
    const [kept, evicted, third] = sets as [ReturnType<typeof planRuleSet>, ...ReturnType<typeof planRuleSet>[]];
    // Room for two of these sets, not three.
    const cache = new CompiledRuleSets(estimatedBytes(kept.json) * 2 + 10);
    const compiledKept = cache.get(kept.key, kept.json);
    cache.get(evicted!.key, evicted!.json);
    cache.get(kept.key);
    cache.get(third!.key, third!.json);
    expect(cache.get(kept.key)).toBe(compiledKept);
    expect(cache.get(evicted!.key)).toBeUndefined();
    expect(cache.size).toBe(2);
  });

  it('holds a large rule set as much as many small ones: by bytes, not by count', () => {
    const words = Array.from({ length: 1000 }, (_, index) => `word-${index}`);
    const large = planRuleSet({
      rules: [
        { ...ruleSet('x').rules[0]!, strategies: [{ type: 'blocklist', words, wholeWord: false, profanity: false }] },
      ],
    });
    const small = planRuleSet(ruleSet('small'));
    const cache = new CompiledRuleSets(estimatedBytes(large.json) + estimatedBytes(small.json));
    cache.get(small.key, small.json);
    cache.get(large.key, large.json);
    expect(cache.size).toBe(2);
    cache.get(planRuleSet(ruleSet('another')).key, planRuleSet(ruleSet('another')).json);
    expect(cache.get(small.key)).toBeUndefined();
  });

  it('compiles a rule set larger than the whole cache for each use without keeping it', () => {
    const plan = planRuleSet(ruleSet('alpha'));
    const cache = new CompiledRuleSets(10);
    expect(cache.get(plan.key, plan.json)?.rules).toHaveLength(1);
    expect(cache.size).toBe(0);
  });
});
