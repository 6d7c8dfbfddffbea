import type { RuleSet } from '@vigil/proto';
import { Content } from './content';
import { createProviderClient, judgeScores, type ProviderOptions, type ScoreFn, type Scores } from './provider';
import { createLlmClient, type JudgeFn, type LlmOptions } from './llm';
import { compileRuleSet, type CompiledStrategy } from './rule-set';
import type { EngineInput, EngineResult, ModerationEngine } from './types';

export { ProviderError } from './types';
export type { EngineInput, EngineResult, ModerationEngine, PriorDecision } from './types';
export type { ProviderOptions } from './provider';
export type { LlmOptions } from './llm';

export interface EngineOptions {
  /** An OpenAI-compatible moderation API. Without it, `openai-moderation` strategies are skipped (they never flag). */
  provider?: ProviderOptions;
  /**
   * An OpenAI-compatible chat completions API. Without it, `prompt` strategies never flag; the gateway refuses them
   * (PUT /rules) when the deployment says the LLM is off, so such rules exist only through a misconfiguration.
   */
  llm?: LlmOptions;
}

/**
 * The rule engine. A record is Flagged when any strategy of any enabled rule that applies to its entity flags; all
 * strategies run (no short-circuit) so that `reasons` and `rules` are complete. Throws ProviderError when the provider
 * is needed and fails, or the caller's abort reason when `signal` aborts first.
 */
export function createEngine(options: EngineOptions): ModerationEngine {
  const score: ScoreFn | undefined = options.provider ? createProviderClient(options.provider) : undefined;
  const judge: JudgeFn | undefined = options.llm ? createLlmClient(options.llm) : undefined;

  return {
    async moderate(input: EngineInput, ruleSet: RuleSet, signal?: AbortSignal): Promise<EngineResult> {
      const rules = compileRuleSet(ruleSet).rules.filter((rule) => !rule.entities || rule.entities.has(input.entity));
      const content = new Content(input);

      // One provider call per record however many rules use it; it runs while the local strategies do.
      const wanted = score && content.fields.length > 0 && rules.some((rule) => rule.usesProvider);
      const pending = wanted ? score(content.forProvider, signal) : undefined;
      void pending?.catch(() => undefined);

      // Every prompt strategy asks the LLM at once (bounded per tenant by the client), alongside the provider.
      const prompts = new Map<CompiledStrategy, Promise<boolean>>();
      if (judge && content.fields.length > 0) {
        for (const rule of rules) {
          for (const strategy of rule.strategies) {
            if (strategy.kind !== 'prompt') continue;
            const job = {
              tenantId: input.tenantId ?? '',
              topic: strategy.topic,
              prompt: strategy.prompt,
              content: content.forProvider,
              prior: input.prior,
            };
            const verdict = judge(job, signal);
            void verdict.catch(() => undefined);
            prompts.set(strategy, verdict);
          }
        }
      }

      const local = rules.map((rule) =>
        rule.strategies.map((strategy) => (strategy.kind === 'local' ? strategy.check(content) : undefined)),
      );
      const scores: Scores | undefined = pending ? await pending : undefined;
      const verdicts = new Map<CompiledStrategy, boolean>();
      for (const [strategy, verdict] of prompts) verdicts.set(strategy, await verdict);

      const reasons = new Set<string>();
      const matched: string[] = [];
      rules.forEach((rule, ruleIndex) => {
        let flagged = false;
        rule.strategies.forEach((strategy, strategyIndex) => {
          const found = findings(strategy, local[ruleIndex]?.[strategyIndex], scores, verdicts);
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

/** Reasons of one strategy; a prompt's reason names its topic, never the content or the model's reasoning. */
function findings(
  strategy: CompiledStrategy,
  local: string[] | undefined,
  scores: Scores | undefined,
  verdicts: ReadonlyMap<CompiledStrategy, boolean>,
): string[] {
  switch (strategy.kind) {
    case 'local':
      return local ?? [];
    case 'provider':
      return scores ? judgeScores(scores, strategy.thresholds) : [];
    case 'prompt':
      return verdicts.get(strategy) ? [`Content flagged for ${strategy.topic}`] : [];
  }
}
