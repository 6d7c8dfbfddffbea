import { DEFAULT_RULES, PATTERN_MAX_PROGRAM_SIZE, RuleSet, type Rule, type Strategy } from '@vigil/proto/rules';
import { createEngine } from './rule-engine';
import type { EngineInput } from './types';

const engine = createEngine({});

function record(overrides: Partial<EngineInput> = {}): EngineInput {
  return { entity: 'post', name: '', text: '', imageUrls: [], externalUrls: [], ...overrides };
}

function rule(id: string, strategies: Strategy[], extra: Partial<Rule> = {}): Rule {
  return { id, name: id, enabled: true, entities: [], strategies, ...extra };
}

function blocklist(words: string[], options: { wholeWord?: boolean; profanity?: boolean } = {}): Strategy {
  return { type: 'blocklist', words, wholeWord: options.wholeWord ?? false, profanity: options.profanity ?? false };
}

function links(blockedDomains: string[], allowedDomains: string[] = []): Strategy {
  return { type: 'links', blockedDomains, allowedDomains };
}

interface Case {
  name: string;
  input: Partial<EngineInput>;
  rules: Rule[];
  reasons: string[];
  rules_matched: string[];
}

const cases: Case[] = [
  // default profanity: leetspeak needs a letter
  {
    name: 'numbers that read as words in leetspeak are not profane (455, 717)',
    input: { name: 'Post 455', text: 'paid 717 for it' },
    rules: DEFAULT_RULES.rules,
    reasons: [],
    rules_matched: [],
  },
  {
    name: 'leetspeak with a letter in it is still profane',
    input: { text: 'what an a55' },
    rules: DEFAULT_RULES.rules,
    reasons: ['Content contains blocked word: ass'],
    rules_matched: ['profanity'],
  },
  // blocklist: substring vs whole word
  {
    name: 'substring match is case-insensitive and finds a word inside another',
    input: { text: 'Buy CHEAPpills today' },
    rules: [rule('spam', [blocklist(['cheap'])])],
    reasons: ['Content contains blocked word: cheap'],
    rules_matched: ['spam'],
  },
  {
    name: 'whole word does not match inside another word',
    input: { text: 'Buy CHEAPpills today' },
    rules: [rule('spam', [blocklist(['cheap'], { wholeWord: true })])],
    reasons: [],
    rules_matched: [],
  },
  {
    name: 'whole word matches next to punctuation',
    input: { text: 'So cheap!' },
    rules: [rule('spam', [blocklist(['cheap'], { wholeWord: true })])],
    reasons: ['Content contains blocked word: cheap'],
    rules_matched: ['spam'],
  },
  {
    name: 'whole word treats regex metacharacters literally',
    input: { text: 'I write c++ daily, not cxx' },
    rules: [rule('lang', [blocklist(['c++', 'c.x'], { wholeWord: true })])],
    reasons: ['Content contains blocked word: c++'],
    rules_matched: ['lang'],
  },
  {
    name: 'whole word respects non-ASCII letters',
    input: { text: 'un café noir, pas cafés' },
    rules: [rule('fr', [blocklist(['café', 'caf'], { wholeWord: true })])],
    reasons: ['Content contains blocked word: café'],
    rules_matched: ['fr'],
  },
  {
    name: 'whole word finds an occurrence that overlaps a candidate inside another word',
    input: { text: 'ba a a' },
    rules: [rule('w', [blocklist(['a a'], { wholeWord: true })])],
    reasons: ['Content contains blocked word: a a'],
    rules_matched: ['w'],
  },
  {
    name: 'whole word reads a letter outside the BMP next to it as a letter, and an emoji as a boundary',
    input: { text: '\u{1d49c}spam \u{1F600}spam\u{1F600}' },
    rules: [rule('w', [blocklist(['spam'], { wholeWord: true })])],
    reasons: ['Content contains blocked word: spam'],
    rules_matched: ['w'],
  },
  {
    name: 'whole word does not match next to a letter outside the BMP',
    input: { text: '\u{1d49c}spam spam\u{1d49c} ok' },
    rules: [rule('w', [blocklist(['spam', 'ok'], { wholeWord: true })])],
    reasons: ['Content contains blocked word: ok'],
    rules_matched: ['w'],
  },
  {
    name: 'a phrase matches only in full, across any whitespace',
    input: { text: 'free\n  money here' },
    rules: [rule('phrase', [blocklist(['free money', 'free gift'])])],
    reasons: ['Content contains blocked word: free money'],
    rules_matched: ['phrase'],
  },
  {
    name: 'every matched word gets its own reason, overlapping ones included',
    input: { text: 'badword' },
    rules: [rule('words', [blocklist(['bad', 'badword', 'good'])])],
    reasons: ['Content contains blocked word: bad', 'Content contains blocked word: badword'],
    rules_matched: ['words'],
  },
  // blocklist: profanity through obscenity
  {
    name: 'profanity catches leetspeak',
    input: { text: 'this is sh1t' },
    rules: [rule('profanity', [blocklist([], { profanity: true })])],
    reasons: ['Content contains blocked word: shit'],
    rules_matched: ['profanity'],
  },
  {
    name: 'profanity catches repeated letters and upper case',
    input: { text: 'FUUUUCK that' },
    rules: [rule('profanity', [blocklist([], { profanity: true })])],
    reasons: ['Content contains blocked word: fuck'],
    rules_matched: ['profanity'],
  },
  {
    name: 'profanity ignores innocent words that contain a profane substring',
    input: { text: 'Scunthorpe has a class assessment' },
    rules: [rule('profanity', [blocklist([], { profanity: true })])],
    reasons: [],
    rules_matched: [],
  },
  {
    name: 'profanity is not assembled across two fields',
    input: { name: 'f', text: 'ck', metadata: { a: 'sh', b: 'it' } },
    rules: [rule('profanity', [blocklist([], { profanity: true })])],
    reasons: [],
    rules_matched: [],
  },
  {
    name: 'profanity is found in any field and reported once per word',
    input: { name: 'shit', text: 'fine', metadata: { deep: [{ x: 'sh1t and fuck' }] } },
    rules: [rule('profanity', [blocklist([], { profanity: true })])],
    reasons: ['Content contains blocked word: shit', 'Content contains blocked word: fuck'],
    rules_matched: ['profanity'],
  },
  {
    name: 'profanity off does not use the dataset',
    input: { text: 'this is shit' },
    rules: [rule('words', [blocklist(['spam'])])],
    reasons: [],
    rules_matched: [],
  },
  // fields judged
  {
    name: 'the record name is judged',
    input: { name: 'cheap stuff', text: 'hello' },
    rules: [rule('spam', [blocklist(['cheap'])])],
    reasons: ['Content contains blocked word: cheap'],
    rules_matched: ['spam'],
  },
  {
    name: 'strings nested in metadata objects and arrays are judged',
    input: { text: 'hello', metadata: { a: 1, b: { c: [true, { d: 'very cheap' }] } } },
    rules: [rule('spam', [blocklist(['cheap'])])],
    reasons: ['Content contains blocked word: cheap'],
    rules_matched: ['spam'],
  },
  {
    name: 'metadata keys and non-string values are not judged',
    input: { metadata: { cheap: 42, other: null } },
    rules: [rule('spam', [blocklist(['cheap', '42'])])],
    reasons: [],
    rules_matched: [],
  },
  {
    name: 'a phrase never matches across two fields',
    input: { name: 'free', text: 'money' },
    rules: [rule('phrase', [blocklist(['free money'])])],
    reasons: [],
    rules_matched: [],
  },
  // rule scoping
  {
    name: 'a disabled rule is skipped',
    input: { text: 'cheap' },
    rules: [rule('spam', [blocklist(['cheap'])], { enabled: false })],
    reasons: [],
    rules_matched: [],
  },
  {
    name: 'a rule scoped to other entities is skipped',
    input: { entity: 'post', text: 'cheap' },
    rules: [
      rule('comments', [blocklist(['cheap'])], { entities: ['comment'] }),
      rule('posts', [blocklist(['cheap'])], { entities: ['comment', 'post'] }),
    ],
    reasons: ['Content contains blocked word: cheap'],
    rules_matched: ['posts'],
  },
  {
    name: 'rules are reported in rule order, a shared reason once',
    input: { text: 'cheap http://evil.example.com/x' },
    rules: [
      rule('b', [links(['example.com'])]),
      rule('quiet', [blocklist(['absent'])]),
      rule('a', [blocklist(['absent']), blocklist(['cheap'])]),
      rule('c', [blocklist(['cheap'])]),
    ],
    reasons: ['Content links to blocked domain: example.com', 'Content contains blocked word: cheap'],
    rules_matched: ['b', 'a', 'c'],
  },
  // patterns
  {
    name: 'patterns are case-insensitive and the reason names the pattern, not the content',
    input: { text: 'call me at 555-123-4567 SOON' },
    rules: [rule('phone', [{ type: 'patterns', patterns: ['\\d{3}-\\d{3}-\\d{4}', 'soon$', 'never'] }])],
    reasons: ['Content matches pattern: \\d{3}-\\d{3}-\\d{4}', 'Content matches pattern: soon$'],
    rules_matched: ['phone'],
  },
  {
    name: 'patterns see metadata strings',
    input: { metadata: { bio: ['contact: someone@example.org'] } },
    rules: [rule('email', [{ type: 'patterns', patterns: ['[a-z]+@[a-z]+\\.[a-z]+'] }])],
    reasons: ['Content matches pattern: [a-z]+@[a-z]+\\.[a-z]+'],
    rules_matched: ['email'],
  },
  {
    name: 'an uncompilable stored pattern is ignored, the valid ones still run',
    input: { text: 'abc' },
    rules: [rule('p', [{ type: 'patterns', patterns: ['(unclosed', 'b'] }])],
    reasons: ['Content matches pattern: b'],
    rules_matched: ['p'],
  },
  // links
  {
    name: 'a blocked domain matches itself and its subdomains, not look-alikes',
    input: { text: 'see https://Shop.Example.com/a?b and http://notexample.com and https://example.com.evil.net' },
    rules: [rule('links', [links(['example.com'])])],
    reasons: ['Content links to blocked domain: example.com'],
    rules_matched: ['links'],
  },
  {
    name: 'bare www links count',
    input: { text: 'go to www.spam.test.' },
    rules: [rule('links', [links(['spam.test'])])],
    reasons: ['Content links to blocked domain: spam.test'],
    rules_matched: ['links'],
  },
  {
    name: 'internationalised domains match in either spelling',
    input: { text: 'http://shop.bücher.test/x', externalUrls: ['https://xn--exmple-cua.test'] },
    rules: [rule('links', [links(['xn--bcher-kva.test', 'exämple.test'])])],
    reasons: [
      'Content links to blocked domain: xn--bcher-kva.test',
      'Content links to blocked domain: xn--exmple-cua.test',
    ],
    rules_matched: ['links'],
  },
  {
    name: 'text without a link never flags',
    input: { text: 'example.com is mentioned but not linked' },
    rules: [rule('links', [links(['example.com'])])],
    reasons: [],
    rules_matched: [],
  },
  {
    name: 'externalUrls and imageUrls are checked',
    input: { externalUrls: ['https://a.bad.test/x'], imageUrls: ['https://cdn.worse.test/i.png'] },
    rules: [rule('links', [links(['bad.test', 'worse.test'])])],
    reasons: ['Content links to blocked domain: bad.test', 'Content links to blocked domain: worse.test'],
    rules_matched: ['links'],
  },
  {
    name: 'configured domains are normalised (scheme, wildcard, case, trailing dot)',
    input: { text: 'http://x.bad.test/ and https://other.test' },
    rules: [rule('links', [links(['*.BAD.test.', 'https://other.test/path'])])],
    reasons: ['Content links to blocked domain: bad.test', 'Content links to blocked domain: other.test'],
    rules_matched: ['links'],
  },
  {
    name: 'with an allow list, links outside it flag and subdomains of allowed ones pass',
    input: { text: 'https://docs.good.test/a https://elsewhere.test', metadata: { site: 'www.good.test' } },
    rules: [rule('links', [links([], ['good.test'])])],
    reasons: ['Content links to a domain outside the allowed list: elsewhere.test'],
    rules_matched: ['links'],
  },
  {
    name: 'with an allow list, content without links passes',
    input: { text: 'no links at all' },
    rules: [rule('links', [links([], ['good.test'])])],
    reasons: [],
    rules_matched: [],
  },
  // provider strategy without a provider
  {
    name: 'openai-moderation is skipped when no provider is configured',
    input: { text: 'anything' },
    rules: [rule('ai', [{ type: 'openai-moderation', thresholds: { hate: 0 } }])],
    reasons: [],
    rules_matched: [],
  },
];

describe('moderation engine', () => {
  it.each(cases)('$name', async ({ input, rules, reasons, rules_matched }) => {
    const result = await engine.moderate(record(input), { rules });
    expect(result).toEqual({
      status: rules_matched.length > 0 ? 'Flagged' : 'Compliant',
      reasons,
      rules: rules_matched,
    });
  });

  it.each([
    { text: 'what the fuck', status: 'Flagged' },
    { text: 'sh1t happens', status: 'Flagged' },
    { text: 'A perfectly pleasant afternoon in Scunthorpe.', status: 'Compliant' },
    { text: '', status: 'Compliant' },
  ])('default rules judge "$text" $status', async ({ text, status }) => {
    const result = await engine.moderate(record({ text }), DEFAULT_RULES);
    expect(result.status).toBe(status);
    expect(result.rules).toEqual(status === 'Flagged' ? ['profanity'] : []);
  });

  it('gives the same answer for an equal rule set loaded as a fresh object', async () => {
    const rules = () => ({ rules: [rule('spam', [blocklist(['cheap'])])] });
    const first = await engine.moderate(record({ text: 'cheap' }), rules());
    const second = await engine.moderate(record({ text: 'cheap' }), rules());
    const changed = await engine.moderate(record({ text: 'cheap' }), { rules: [rule('spam', [blocklist(['dear'])])] });
    expect(first).toEqual(second);
    expect(changed.status).toBe('Compliant');
  });

  it('never repeats the content in a reason', async () => {
    const secret = 'my phone is 555-123-4567 and I hate this';
    const result = await engine.moderate(record({ text: secret }), {
      rules: [rule('p', [{ type: 'patterns', patterns: ['\\d+'] }, blocklist(['hate'], { profanity: true })])],
    });
    expect(result.status).toBe('Flagged');
    for (const reason of result.reasons) expect(reason).not.toContain(secret);
  });

  it('runs patterns over the whole of every field, however long', async () => {
    // A word near the end of a 100,000-character text: a pattern sees it as the blocklist does.
    const text = `${'a '.repeat(49_990)}needle`;
    const result = await engine.moderate(record({ text }), {
      rules: [rule('long', [{ type: 'patterns', patterns: ['needle$'] }]), rule('words', [blocklist(['needle'])])],
    });
    expect(result.rules).toEqual(['long', 'words']);
    const short = await engine.moderate(record({ metadata: { short: 'needle' } }), {
      rules: [rule('long', [{ type: 'patterns', patterns: ['needle$'] }])],
    });
    expect(short.rules).toEqual(['long']);
  });
});

describe('RuleSet schema', () => {
  const withPatterns = (patterns: string[]) => ({
    rules: [{ id: 'p', name: 'P', strategies: [{ type: 'patterns', patterns }] }],
  });

  it.each([
    { patterns: ['(unclosed'], path: ['rules', 0, 'strategies', 0, 'patterns', 0] },
    { patterns: ['ok', '[z-a]'], path: ['rules', 0, 'strategies', 0, 'patterns', 1] },
    { patterns: ['a**'], path: ['rules', 0, 'strategies', 0, 'patterns', 0] },
  ])('rejects the invalid regular expression in $patterns at its path', ({ patterns, path }) => {
    const parsed = RuleSet.safeParse(withPatterns(patterns));
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((issue) => issue.path)).toEqual([path]);
  });

  it.each([
    ['(\\w+)\\s\\1', 'a backreference'],
    ['(?<w>a)\\k<w>', 'a named backreference'],
    ['foo(?=bar)', 'a lookahead'],
    ['foo(?!bar)', 'a negative lookahead'],
    ['(?<=@)\\w+', 'a lookbehind'],
    ['(?<!x)y', 'a negative lookbehind'],
  ])('rejects %s (%s), which only a backtracking engine runs, naming its path', (pattern) => {
    const parsed = RuleSet.safeParse(withPatterns(['fine', pattern]));
    expect(parsed.error?.issues.map((issue) => [issue.path, issue.message])).toEqual([
      [
        ['rules', 0, 'strategies', 0, 'patterns', 1],
        'backreferences and lookaround are not supported: patterns run in linear time (RE2)',
      ],
    ]);
  });

  it('rejects a pattern that compiles to more than PATTERN_MAX_PROGRAM_SIZE instructions', () => {
    const parsed = RuleSet.safeParse(withPatterns([`\\w{${PATTERN_MAX_PROGRAM_SIZE}}`]));
    expect(parsed.error?.issues.map((issue) => issue.message)).toEqual([
      `pattern too large: more than ${PATTERN_MAX_PROGRAM_SIZE} RE2 instructions`,
    ]);
    expect(RuleSet.safeParse(withPatterns(['\\w{100}'])).success).toBe(true);
  });

  it.each([['(a+)+$'], ['(\\w*)*@'], ['^(x|y+)*z'], ['(a|a)*$'], ['a*a*a*a*a*a*a*b']])(
    'accepts %s: exponential under backtracking, linear on RE2',
    (pattern) => {
      expect(RuleSet.safeParse(withPatterns([pattern])).success).toBe(true);
    },
  );

  it('accepts valid regular expressions', () => {
    expect(
      RuleSet.safeParse(withPatterns(['^\\d{3}$', '(?<word>\\w+)', '\\bcat\\b', '[\\p{L}]+', 'caf\\x{e9}', '\\/path']))
        .success,
    ).toBe(true);
  });

  it('accepts the default rules', () => {
    expect(RuleSet.safeParse(DEFAULT_RULES).success).toBe(true);
  });
});
