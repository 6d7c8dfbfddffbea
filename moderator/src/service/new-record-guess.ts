import type { RuleSet } from '@vigil/proto/rules';
import type { ModerateInput } from './moderate-input';

/** Strategies that judge text in this process, without a call to a provider (which a second judgement would repeat). */
const IN_PROCESS_STRATEGIES: ReadonlySet<string> = new Set(['blocklist', 'patterns', 'links', 'pii']);
const inProcess = new WeakMap<RuleSet, boolean>();

/** Whether every enabled strategy of the rule set judges text in this process (cached per rule set). */
function judgedInProcess(rules: RuleSet): boolean {
  let known = inProcess.get(rules);
  if (known === undefined) {
    known = rules.rules.every(
      (rule) => rule.enabled === false || rule.strategies.every((strategy) => IN_PROCESS_STRATEGIES.has(strategy.type)),
    );
    inProcess.set(rules, known);
  }
  return known;
}

/**
 * Whether a moderation may assume its record is new (`MODERATE_ASSUME_NEW`): only where judging again after a wrong
 * guess costs less than the read it saves, a record without images under live rules that all judge in the process;
 * and never with a user, whose flagged count a decision on a wrong guess could move.
 */
export function worthGuessing(input: Pick<ModerateInput, 'content' | 'user'>, liveRules: RuleSet): boolean {
  return !input.user && !input.content.imageUrls?.length && judgedInProcess(liveRules);
}
