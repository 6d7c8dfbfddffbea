import type { Rule } from '@vigil/proto/rules';
import { createEngine } from './index';
import type { EngineInput } from './types';

// Tenant patterns run on RE2: time linear in the field, whatever the pattern. Under a backtracking engine the first
// two cases below take seconds on 26 characters and minutes on 50; here they run over 10,000 characters well inside
// the test's own timeout, with the answer a correct matcher gives.
const engine = createEngine({});
const LONG = 10_000;
const TIMEOUT_MS = 10_000;

const record = (text: string): EngineInput => ({ entity: 'post', name: '', text, imageUrls: [], externalUrls: [] });
const patterns = (...list: string[]): { rules: Rule[] } => ({
  rules: [{ id: 'p', name: 'p', enabled: true, entities: [], strategies: [{ type: 'patterns', patterns: list }] }],
});
const flags = async (pattern: string, text: string): Promise<boolean> =>
  (await engine.moderate(record(text), patterns(pattern))).status === 'Flagged';

describe('patterns on RE2', () => {
  it.each([
    { pattern: '(a|a)*$', input: "10,000 a's then !", text: `${'a'.repeat(LONG)}!`, flagged: true },
    { pattern: '^(a|a)*$', input: "10,000 a's then !", text: `${'a'.repeat(LONG)}!`, flagged: false },
    { pattern: '^(a|a)*$', input: "10,000 a's", text: 'a'.repeat(LONG), flagged: true },
    { pattern: 'a*a*a*a*a*a*a*b', input: "10,000 a's", text: 'a'.repeat(LONG), flagged: false },
    { pattern: 'a*a*a*a*a*a*a*b', input: "10,000 a's then b", text: `${'a'.repeat(LONG)}b`, flagged: true },
    { pattern: '(a+)+$', input: "10,000 a's then !", text: `${'a'.repeat(LONG)}!`, flagged: false },
    { pattern: '(a+)+!', input: "10,000 a's then !", text: `${'a'.repeat(LONG)}!`, flagged: true },
    { pattern: '(x+x+)+y', input: "10,000 x's", text: 'x'.repeat(LONG), flagged: false },
  ])(
    'judges $pattern on $input at once (flagged: $flagged)',
    async ({ pattern, text, flagged }) => {
      expect(await flags(pattern, text)).toBe(flagged);
    },
    TIMEOUT_MS,
  );

  // Patterns that were valid JavaScript regular expressions keep their meaning.
  it.each([
    ['\\d{3}-\\d{3}-\\d{4}', 'call 555-123-4567', true],
    ['\\d{3}-\\d{3}-\\d{4}', 'call 555-123-456', false],
    ['soon$', 'see you SOON', true],
    ['soon$', 'soon enough', false],
    ['^hello', 'Hello there', true],
    ['^hello', 'oh hello', false],
    ['\\bcat\\b', 'a cat sat', true],
    ['\\bcat\\b', 'concatenate', false],
    ['[a-z]+@[a-z]+\\.[a-z]+', 'mail ANN@EXAMPLE.ORG', true],
    ['(?<word>spam)\\s+now', 'SPAM   now', true],
    ['colou?r', 'COLOR', true],
    ['a.b', 'a\nb', false],
    ['a.b', 'a-b', true],
    ['café', 'CAFÉ au lait', true],
    ['\\p{Lu}{3}', 'ABC', true],
    ['(?:buy|sell)\\s+(?:now|today)', 'Sell today', true],
    ['x{2,3}', 'axxb', true],
    ['[^\\x00-\\x7F]', 'plain ascii', false],
    ['\\/path', 'a /path', true],
  ])('matches %s against %j as a JavaScript pattern did (flagged: %s)', async (pattern, text, expected) => {
    expect(await flags(pattern, text)).toBe(expected);
    // The same answer as a JavaScript RegExp with the flag the API documented.
    expect(new RegExp(pattern, pattern.includes('\\p') ? 'iu' : 'i').test(text)).toBe(expected);
  });
});
