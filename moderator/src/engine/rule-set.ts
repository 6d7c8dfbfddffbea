import { createHash } from 'node:crypto';
import type { ImageClass, RuleSet } from '@vigil/proto/rules';
import { LRUCache } from 'lru-cache';
import { compileBlocklist, compileLinks, compilePatterns, type LocalCheck } from './strategies';
import type { Thresholds } from './provider';
import { compilePii } from './pii';

export type PlannedStrategy =
  | { kind: 'local' }
  | { kind: 'provider'; thresholds: Thresholds }
  | { kind: 'prompt'; topic: string; prompt: string; skipImages: boolean }
  | { kind: 'images'; thresholds: Partial<Record<ImageClass, number>>; onFetchError: 'ignore' | 'flag' }
  | { kind: 'image-text'; onTimeout: 'ignore' | 'flag' };

interface PlannedRule {
  id: string;
  /** Undefined: the rule applies to every entity. */
  entities: ReadonlySet<string> | undefined;
  strategies: readonly PlannedStrategy[];
  usesProvider: boolean;
}

/**
 * What the main thread keeps of a rule set: which rules apply to which entity and what the provider and prompt
 * strategies ask, without compiling anything. Local strategies are compiled and run where the checks run (a worker),
 * from `json`, and found again there by `key`.
 */
export interface RuleSetPlan {
  /** SHA-256 of `json`: equal rule sets share one compiled form wherever it is kept. */
  key: string;
  json: string;
  /** Enabled rules only, in rule set order; local check results are indexed by rule and strategy of this list. */
  rules: readonly PlannedRule[];
}

/** Local checks of one rule set, aligned with its plan's rules and strategies (undefined where not local). */
export interface CompiledChecks {
  rules: readonly { entities: ReadonlySet<string> | undefined; checks: readonly (LocalCheck | undefined)[] }[];
}

const plans = new WeakMap<RuleSet, RuleSetPlan>();

/**
 * The plan of a rule set, built once per object: the tenant config cache keeps one object per stored revision, so a
 * record pays one WeakMap lookup. Rule sets are treated as immutable: a caller must not change one after passing it
 * in. Serialising and hashing cost about 30 µs per 1000 words, once per revision.
 */
export function planRuleSet(ruleSet: RuleSet): RuleSetPlan {
  const known = plans.get(ruleSet);
  if (known) return known;
  const json = JSON.stringify(enabledRules(ruleSet));
  const plan: RuleSetPlan = {
    key: createHash('sha256').update(json).digest('base64'),
    json,
    rules: enabledRules(ruleSet).map((rule) => {
      const strategies = rule.strategies.map((strategy): PlannedStrategy => {
        switch (strategy.type) {
          case 'openai-moderation':
            return { kind: 'provider', thresholds: strategy.thresholds };
          case 'prompt':
            return {
              kind: 'prompt',
              topic: strategy.topic,
              prompt: strategy.prompt,
              skipImages: strategy.skipImages ?? false,
            };
          case 'images':
            return { kind: 'images', thresholds: strategy.thresholds, onFetchError: strategy.onFetchError ?? 'ignore' };
          case 'image-text':
            return { kind: 'image-text', onTimeout: strategy.onTimeout ?? 'ignore' };
          default:
            return { kind: 'local' };
        }
      });
      return {
        id: rule.id,
        entities: rule.entities && rule.entities.length > 0 ? new Set(rule.entities) : undefined,
        strategies,
        usesProvider: strategies.some((strategy) => strategy.kind === 'provider'),
      };
    }),
  };
  plans.set(ruleSet, plan);
  return plan;
}

function enabledRules(ruleSet: RuleSet): RuleSet['rules'] {
  return ruleSet.rules.filter((rule) => rule.enabled !== false);
}

/** Compiles the local strategies of the enabled rules of `rules` (a plan's `json`), in plan order. */
function compileChecks(rules: RuleSet['rules']): CompiledChecks {
  return {
    rules: rules.map((rule) => ({
      entities: rule.entities && rule.entities.length > 0 ? new Set(rule.entities) : undefined,
      checks: rule.strategies.map((strategy): LocalCheck | undefined => {
        switch (strategy.type) {
          case 'blocklist':
            return compileBlocklist(strategy);
          case 'patterns':
            return compilePatterns(strategy);
          case 'links':
            return compileLinks(strategy);
          case 'pii':
            return compilePii(strategy);
          default:
            return undefined;
        }
      }),
    })),
  };
}

/**
 * Compiled rule sets by plan key, bounded by memory rather than by count: one tenant's largest admitted set and a
 * thousand small ones weigh what they cost. A compiled set is estimated at 8 bytes per character of its JSON (the
 * regular expressions V8 and RE2 build from its words and patterns, measured on the largest admitted sets), and the
 * least recently used sets are dropped first. A set larger than the whole cache is compiled for each use only.
 */
export class CompiledRuleSets {
  private readonly cache: LRUCache<string, CompiledChecks>;

  constructor(maxBytes: number) {
    this.cache = new LRUCache<string, CompiledChecks>({ maxSize: Math.max(1, maxBytes) });
  }

  /** The compiled checks for `key`; undefined when unknown and `json` was not given. */
  get(key: string, json?: string): CompiledChecks | undefined {
    const hit = this.cache.get(key);
    if (hit || json === undefined) return hit;
    const compiled = compileChecks(JSON.parse(json) as RuleSet['rules']);
    const size = estimatedBytes(json);
    if (size <= this.cache.maxSize) this.cache.set(key, compiled, { size });
    return compiled;
  }

  get size(): number {
    return this.cache.size;
  }

  get bytes(): number {
    return this.cache.calculatedSize;
  }
}

export function estimatedBytes(json: string): number {
  return 1024 + json.length * 8;
}
