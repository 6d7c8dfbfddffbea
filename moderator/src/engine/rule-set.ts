import { createHash } from 'node:crypto';
import type { RuleSet } from '@vigil/proto';
import { compileBlocklist, compileLinks, compilePatterns, type LocalCheck } from './strategies';
import type { Thresholds } from './provider';

export type CompiledStrategy =
  | { kind: 'local'; check: LocalCheck }
  | { kind: 'provider'; thresholds: Thresholds }
  | { kind: 'prompt'; topic: string; prompt: string };

export interface CompiledRule {
  id: string;
  /** Undefined: the rule applies to every entity. */
  entities: ReadonlySet<string> | undefined;
  strategies: readonly CompiledStrategy[];
  usesProvider: boolean;
}

export interface CompiledRuleSet {
  /** Enabled rules only, in rule set order. */
  rules: readonly CompiledRule[];
}

/** Distinct rule sets kept compiled; one per active tenant in practice, least recently used dropped first. */
const MAX_CACHED = 1000;

const byObject = new WeakMap<RuleSet, CompiledRuleSet>();
const byHash = new Map<string, CompiledRuleSet>();

/**
 * The compiled form of a rule set, built once: a caller that keeps the same object pays one WeakMap lookup; one that
 * reloads it (a fresh object per call) pays a hash of its JSON (about 30 µs for 1000 words) and finds the compiled set
 * by content. Rule sets are treated as immutable: a caller must not change one after passing it in.
 */
export function compileRuleSet(ruleSet: RuleSet): CompiledRuleSet {
  const known = byObject.get(ruleSet);
  if (known) return known;

  const hash = createHash('sha256').update(JSON.stringify(ruleSet)).digest('base64');
  let compiled = byHash.get(hash);
  if (compiled) {
    byHash.delete(hash);
  } else {
    compiled = build(ruleSet);
    if (byHash.size >= MAX_CACHED) {
      const oldest = byHash.keys().next();
      if (!oldest.done) byHash.delete(oldest.value);
    }
  }
  byHash.set(hash, compiled);
  byObject.set(ruleSet, compiled);
  return compiled;
}

function build(ruleSet: RuleSet): CompiledRuleSet {
  const rules: CompiledRule[] = [];
  for (const rule of ruleSet.rules) {
    if (rule.enabled === false) continue;
    const strategies = rule.strategies.map((strategy): CompiledStrategy => {
      switch (strategy.type) {
        case 'blocklist':
          return { kind: 'local', check: compileBlocklist(strategy) };
        case 'patterns':
          return { kind: 'local', check: compilePatterns(strategy) };
        case 'links':
          return { kind: 'local', check: compileLinks(strategy) };
        case 'openai-moderation':
          return { kind: 'provider', thresholds: strategy.thresholds };
        case 'prompt':
          return { kind: 'prompt', topic: strategy.topic, prompt: strategy.prompt };
      }
    });
    rules.push({
      id: rule.id,
      entities: rule.entities && rule.entities.length > 0 ? new Set(rule.entities) : undefined,
      strategies,
      usesProvider: strategies.some((strategy) => strategy.kind === 'provider'),
    });
  }
  return { rules };
}
