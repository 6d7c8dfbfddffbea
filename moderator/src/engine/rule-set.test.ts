import type { Rule, RuleSet } from '@vigil/proto';
import { compileRuleSet } from './rule-set';

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

describe('compileRuleSet', () => {
  it.each([
    { name: 'the same object', second: (first: RuleSet) => first, same: true },
    { name: 'an equal object loaded again', second: () => ruleSet('alpha'), same: true },
    { name: 'a rule set with another word', second: () => ruleSet('beta'), same: false },
    { name: 'a rule set with the rule disabled', second: () => ruleSet('alpha', { enabled: false }), same: false },
  ])('reuses the compiled form for $name: $same', ({ second, same }) => {
    const first = ruleSet('alpha');
    const compiled = compileRuleSet(first);
    expect(compileRuleSet(second(first)) === compiled).toBe(same);
  });

  it('drops disabled rules and keeps entity scopes', () => {
    const compiled = compileRuleSet({
      rules: [
        ...ruleSet('a', { id: 'off', enabled: false }).rules,
        ...ruleSet('b', { id: 'on', entities: ['post'] }).rules,
      ],
    });
    expect(compiled.rules.map((rule) => [rule.id, rule.entities && [...rule.entities]])).toEqual([['on', ['post']]]);
  });

  it('forgets the least recently used rule set beyond 1000 distinct ones', () => {
    const compiled = compileRuleSet(ruleSet('evicted'));
    const kept = compileRuleSet(ruleSet('kept'));
    for (let index = 0; index < 999; index += 1) {
      compileRuleSet(ruleSet(`filler-${index}`));
      if (index === 500) compileRuleSet(ruleSet('kept'));
    }
    expect(compileRuleSet(ruleSet('kept'))).toBe(kept);
    expect(compileRuleSet(ruleSet('evicted'))).not.toBe(compiled);
  });
});
