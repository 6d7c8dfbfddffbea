import type { Rule } from '@vigil/proto/rules';
import { diffRuleSets } from './rule-set-diff';

const rule = (id: string, words: string[]): Rule =>
  ({ id, name: id, strategies: [{ type: 'blocklist', words, wholeWord: false, profanity: false }] }) as Rule;

describe('diffRuleSets', () => {
  it.each([
    ['nothing between equal sets', [rule('a', ['x'])], [rule('a', ['x'])], { unchanged: ['a'] }],
    ['a rule added', [rule('a', ['x'])], [rule('a', ['x']), rule('b', ['y'])], { added: ['b'], unchanged: ['a'] }],
    ['a rule removed', [rule('a', ['x']), rule('b', ['y'])], [rule('b', ['y'])], { removed: ['a'], unchanged: ['b'] }],
    ['a rule changed', [rule('a', ['x'])], [rule('a', ['x', 'z'])], { changed: ['a'] }],
    ['from nothing', [], [rule('a', ['x'])], { added: ['a'] }],
  ])('finds %s', (_name, from, to, expected) => {
    const diff = diffRuleSets(from, to);
    expect({
      added: diff.added.map((r) => r.id),
      removed: diff.removed.map((r) => r.id),
      changed: diff.changed.map((c) => c.id),
      unchanged: diff.unchanged,
    }).toEqual({ added: [], removed: [], changed: [], unchanged: [], ...expected });
  });

  it('keeps both sides of a changed rule', () => {
    const [change] = diffRuleSets([rule('a', ['x'])], [rule('a', ['y'])]).changed;
    expect(change?.from.strategies).toEqual([{ type: 'blocklist', words: ['x'], wholeWord: false, profanity: false }]);
    expect(change?.to.strategies).toEqual([{ type: 'blocklist', words: ['y'], wholeWord: false, profanity: false }]);
  });
});
