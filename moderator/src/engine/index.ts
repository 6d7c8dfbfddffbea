import type { RuleSet } from '@vigil/proto';
import { Content } from './content';
import { createProviderClient, judgeScores, type ProviderOptions, type ScoreFn, type Scores } from './provider';
import { compileRuleSet } from './rule-set';
import type { EngineInput, EngineResult, ModerationEngine } from './types';

export { ProviderError } from './types';
export type { EngineInput, EngineResult, ModerationEngine } from './types';
export type { ProviderOptions } from './provider';

export interface EngineOptions {
  /** An OpenAI-compatible moderation API. Without it, `openai-moderation` strategies are skipped (they never flag). */
  provider?: ProviderOptions;
}

/**
 * The rule engine. A record is Flagged when any strategy of any enabled rule that applies to its entity flags; all
 * strategies run (no short-circuit) so that `reasons` and `rules` are complete. Throws ProviderError when the provider
 * is needed and fails, or the caller's abort reason when `signal` aborts first.
 */
export function createEngine(options: EngineOptions): ModerationEngine {
  const score: ScoreFn | undefined = options.provider ? createProviderClient(options.provider) : undefined;

  return {
    async moderate(input: EngineInput, ruleSet: RuleSet, signal?: AbortSignal): Promise<EngineResult> {
      const rules = compileRuleSet(ruleSet).rules.filter((rule) => !rule.entities || rule.entities.has(input.entity));
      const content = new Content(input);

      // One provider call per record however many rules use it; it runs while the local strategies do.
      const wanted = score && content.fields.length > 0 && rules.some((rule) => rule.usesProvider);
      const pending = wanted ? score(content.forProvider, signal) : undefined;
      void pending?.catch(() => undefined);

      const local = rules.map((rule) =>
        rule.strategies.map((strategy) => (strategy.kind === 'local' ? strategy.check(content) : undefined)),
      );
      const scores: Scores | undefined = pending ? await pending : undefined;

      const reasons = new Set<string>();
      const matched: string[] = [];
      rules.forEach((rule, ruleIndex) => {
        let flagged = false;
        rule.strategies.forEach((strategy, strategyIndex) => {
          const found =
            strategy.kind === 'local'
              ? (local[ruleIndex]?.[strategyIndex] ?? [])
              : scores
                ? judgeScores(scores, strategy.thresholds)
                : [];
          if (found.length === 0) return;
          flagged = true;
          for (const reason of found) reasons.add(reason);
        });
        if (flagged && !matched.includes(rule.id)) matched.push(rule.id);
      });

      return { status: matched.length > 0 ? 'Flagged' : 'Compliant', reasons: [...reasons], rules: matched };
    },
  };
}
