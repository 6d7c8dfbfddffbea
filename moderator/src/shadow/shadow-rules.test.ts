import type { RuleSet } from '@vigil/proto/rules';
import { shadowHumanCounts, shadowRunCounts } from '../precision/precision-counts';
import { shadowVersionRules, splitRules } from './shadow-rules';

const rules: RuleSet = {
  rules: [
    { id: 'live', name: 'Live', enabled: true, entities: [], strategies: [{ type: 'patterns', patterns: ['a'] }] },
    {
      id: 'shadow',
      name: 'Shadow',
      enabled: true,
      entities: [],
      shadow: true,
      strategies: [
        { type: 'patterns', patterns: ['b'] },
        { type: 'prompt', topic: 'scams', prompt: 'Is it a scam?' },
      ],
    },
    {
      id: 'prompt-only',
      name: 'Prompt only',
      enabled: true,
      entities: [],
      shadow: true,
      strategies: [{ type: 'prompt', topic: 'scams', prompt: 'Is it a scam?' }],
    },
    {
      id: 'off',
      name: 'Off',
      enabled: false,
      entities: [],
      shadow: true,
      strategies: [{ type: 'patterns', patterns: ['c'] }],
    },
  ],
} as RuleSet;

describe('shadow rules', () => {
  it('judges with the live rules only, and runs the enabled shadow rules with their local strategies', () => {
    const { live, shadow } = splitRules(rules);
    expect(live.rules.map((rule) => rule.id)).toEqual(['live']);
    expect(shadow?.rules.map((rule) => [rule.id, rule.strategies.map((strategy) => strategy.type)])).toEqual([
      ['shadow', ['patterns']],
    ]);
    // The same split for the same object: the engine keeps its prepared set.
    expect(splitRules(rules)).toBe(splitRules(rules));
  });

  it('runs a whole version in shadow: every enabled rule, shadow or not, with its local strategies only', () => {
    const version = shadowVersionRules(rules);
    expect(version?.rules.every((rule) => !rule.shadow && rule.strategies.every((s) => s.type !== 'prompt'))).toBe(
      true,
    );
    // A rule left without local strategies, and a rule turned off, are not run.
    expect(version?.rules.map((rule) => [rule.id, rule.strategies.map((strategy) => strategy.type)])).toEqual([
      ['live', ['patterns']],
      ['shadow', ['patterns']],
    ]);
    expect(shadowVersionRules(rules)).toBe(version);
  });

  it('leaves a rule set without shadow rules as it is', () => {
    const plain: RuleSet = { rules: [rules.rules[0]!] };
    expect(splitRules(plain)).toEqual({ live: plain, shadow: null });
    expect(splitRules(plain).live).toBe(plain);
  });

  const verdict = { tenantId: 't', ruleSetVersion: 2, ran: ['x', 'y'], flagged: ['x'] };
  it.each<[boolean, Record<string, object>]>([
    [true, { x: { runs: 1, wouldFlag: 1, agreeLive: 1 }, y: { runs: 1, disagreeLive: 1 } }],
    [false, { x: { runs: 1, wouldFlag: 1, disagreeLive: 1 }, y: { runs: 1, agreeLive: 1 } }],
  ])('counts each shadow rule against a live result that flagged: %s', (liveFlagged, expected) => {
    const counts = shadowRunCounts(verdict, liveFlagged, '2026-01-01');
    expect(Object.fromEntries(counts.map((delta) => [delta.ruleId, delta.counts]))).toEqual(expected);
  });

  it('counts agreement with a person who flagged the record', () => {
    const counts = shadowHumanCounts(verdict, true, '2026-01-01');
    expect(Object.fromEntries(counts.map((delta) => [delta.ruleId, delta.counts]))).toEqual({
      x: { agreeHuman: 1 },
      y: { disagreeHuman: 1 },
    });
  });
});
