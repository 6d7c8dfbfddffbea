import { issuesOf } from '../../http/validate';
import { RulesBody, SettingsPatchBody } from './rules.schema';

const pathsOf = (schema: typeof RulesBody | typeof SettingsPatchBody, input: unknown) => {
  const result = schema.safeParse(input);
  return result.success ? [] : issuesOf(result.error).map((issue) => issue.path.join('.'));
};

describe('rules and settings bodies', () => {
  it.each([
    ['a threshold of 1', { suspensionThreshold: 1 }, []],
    ['a threshold of 0', { suspensionThreshold: 0 }, ['suspensionThreshold']],
    ['a threshold of 10000', { suspensionThreshold: 10000 }, []],
    ['a threshold of 10001', { suspensionThreshold: 10001 }, ['suspensionThreshold']],
    ['a non-boolean test mode', { testMode: 'yes' }, ['testMode']],
    ['a roll-out of 0 %', { rolloutPercentage: 0 }, []],
    ['a roll-out of 100 %', { rolloutPercentage: 100 }, []],
    ['a roll-out of 101 %', { rolloutPercentage: 101 }, ['rolloutPercentage']],
    ['a roll-out of -1 %', { rolloutPercentage: -1 }, ['rolloutPercentage']],
    ['a fractional roll-out', { rolloutPercentage: 12.5 }, ['rolloutPercentage']],
    ['an unknown setting', { colour: 'red' }, ['colour']],
    ['emails on', { emails: { enabled: true } }, []],
    ['a template reset to the default', { emails: { templates: { Banned: null } } }, []],
    [
      'a template with an unknown placeholder',
      { emails: { templates: { Suspended: { subject: 'Hi {{email}}', heading: 'h', body: 'b' } } } },
      ['emails.templates.Suspended.subject'],
    ],
    [
      'a template without a body',
      { emails: { templates: { Compliant: { subject: 's', heading: 'h' } } } },
      ['emails.templates.Compliant.body'],
    ],
    ['an unknown email kind', { emails: { templates: { Warned: null } } }, ['emails.templates.Warned']],
  ])('settings: %s', (_name, input, expected) => {
    expect(pathsOf(SettingsPatchBody, input)).toEqual(expected);
  });

  it('does not fill defaults into a settings patch (only what is sent changes)', () => {
    expect(SettingsPatchBody.parse({ testMode: true })).toEqual({ testMode: true });
  });

  it.each([
    ['a misspelt rule field', { rules: [{ id: 'a', name: 'A', enabeld: false, strategies: [] }] }, 'rules.0.enabeld'],
    [
      'a misspelt strategy field',
      { rules: [{ id: 'a', name: 'A', strategies: [{ type: 'blocklist', word: ['x'] }] }] },
      'rules.0.strategies.0.word',
    ],
    [
      'a field of another strategy type',
      { rules: [{ id: 'a', name: 'A', strategies: [{ type: 'links', patterns: ['x'] }] }] },
      'rules.0.strategies.0.patterns',
    ],
    ['an unknown top-level field', { rules: [], version: 2 }, 'version'],
  ])('refuses %s, naming it', (_name, input, path) => {
    expect(pathsOf(RulesBody, input)).toContain(path);
  });

  it('refuses duplicate rule ids', () => {
    const rule = { id: 'a', name: 'A', strategies: [{ type: 'blocklist', words: ['x'] }] };
    expect(pathsOf(RulesBody, { rules: [rule, rule] })).toEqual(['rules']);
  });

  it.each([
    ['a lookahead', 'foo(?=bar)'],
    ['a backreference', '(\\w+)\\s\\1'],
    ['an invalid pattern', '(unclosed'],
  ])('refuses %s in a pattern at its path', (_what, pattern) => {
    const body = { rules: [{ id: 'p', name: 'P', strategies: [{ type: 'patterns', patterns: ['ok', pattern] }] }] };
    expect(pathsOf(RulesBody, body)).toEqual(['rules.0.strategies.0.patterns.1']);
  });

  it('accepts patterns that are exponential under backtracking but linear on RE2', () => {
    const body = {
      rules: [{ id: 'p', name: 'P', strategies: [{ type: 'patterns', patterns: ['(a|a)*$', 'a*a*a*a*a*a*a*b'] }] }],
    };
    expect(pathsOf(RulesBody, body)).toEqual([]);
  });
});

describe('the rule set budget', () => {
  /** `[a-z]{1,240}q` compiles to 482 RE2 instructions: the heaviest pattern the issue's probe used. */
  const heavy = (index: number) => `[a-z]{1,240}${index}`;
  const patternRules = (rules: number, perRule: number, pattern: (index: number) => string = heavy) => ({
    rules: Array.from({ length: rules }, (_, r) => ({
      id: `r${r}`,
      name: `R${r}`,
      strategies: [{ type: 'patterns', patterns: Array.from({ length: perRule }, (_, i) => pattern(r * perRule + i)) }],
    })),
  });
  const messagesOf = (input: unknown) => {
    const result = RulesBody.safeParse(input);
    return result.success ? [] : issuesOf(result.error).map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  };

  it('accepts the heaviest patterns the budget admits (20 × 482 RE2 instructions)', () => {
    expect(messagesOf(patternRules(2, 10))).toEqual([]);
  });

  it('refuses patterns compiling to more than 10000 RE2 instructions in all, naming the budget', () => {
    expect(messagesOf(patternRules(3, 10))).toEqual([
      expect.stringMatching(/^rules: the rule set's patterns compile to more than 10000 RE2 instructions in all/),
    ]);
  });

  it('refuses the probe’s 10 rules × 200 heavy patterns by their count, before compiling any', () => {
    expect(messagesOf(patternRules(10, 200))).toEqual([
      'rules: the rule set holds 2000 patterns in all; its budget is 500',
    ]);
  });

  it('stops compiling once invalid patterns have spent the budget', () => {
    const messages = messagesOf(patternRules(5, 100, (index) => `(unclosed${index}`));
    expect(messages.length).toBeLessThan(30);
    expect(messages.at(-1)).toMatch(/were not checked/);
  });

  it.each([
    ['1001 blocklist words', [{ type: 'blocklist', words: Array.from({ length: 1001 }, (_, i) => `w${i}`) }], 'words'],
    [
      '201 strategies',
      Array.from({ length: 201 }, () => ({ type: 'links', blockedDomains: ['example.com'] })),
      'strategies',
    ],
    ['11 prompt strategies', Array.from({ length: 11 }, () => ({ type: 'prompt', topic: 't', prompt: 'p' })), 'prompt'],
  ])('refuses %s over the whole rule set', (_what, strategies, name) => {
    // Spread over rules of at most 20 strategies (and 1000 words each), so that only the budget is exceeded.
    const rules: { id: string; name: string; strategies: unknown[] }[] = [];
    for (const strategy of strategies as { type: string; words?: string[] }[]) {
      const parts = strategy.words
        ? [
            { ...strategy, words: strategy.words.slice(0, 1000) },
            { ...strategy, words: strategy.words.slice(1000) },
          ]
        : [strategy];
      for (const part of parts) {
        const last = rules.at(-1);
        if (last && last.strategies.length < 20) last.strategies.push(part);
        else rules.push({ id: `r${rules.length}`, name: 'R', strategies: [part] });
      }
    }
    expect(messagesOf({ rules })).toEqual([expect.stringMatching(new RegExp(`^rules: .* ${name}.* its budget is`))]);
  });
});
