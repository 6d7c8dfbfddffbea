import { RE2JS } from 're2js';
import { z } from 'zod';
import { LIMITS } from './limits';

/**
 * A tenant's rule set: written by the gateway (`PUT /api/v1/rules`, collection `rules`, one document per tenant with
 * `_id` = tenantId), read by the moderator. A tenant without a document uses DEFAULT_RULES.
 */
export const BlocklistStrategy = z.strictObject({
  type: z.literal('blocklist'),
  /** Tenant words or phrases; matched case-insensitively. */
  words: z.array(z.string().min(1).max(LIMITS.wordLength)).max(LIMITS.words).default([]),
  /** Match whole words only (\bword\b) instead of substrings. */
  wholeWord: z.boolean().default(false),
  /** Also use the `obscenity` English profanity matcher (catches obfuscated variants). */
  profanity: z.boolean().default(false),
});

/**
 * Largest compiled pattern accepted, in RE2 program instructions. Matching is linear in the input, and each character
 * costs up to this many steps; ordinary patterns stay under 100, while `\w{600}` alone is over 600.
 */
export const PATTERN_MAX_PROGRAM_SIZE = 500;

/** Backreferences and lookaround: refused by RE2, named in the refusal so that the reason is plain. */
const BACKTRACKING_ONLY = /\\[1-9]|\\k<|\(\?<?[=!]/;

/**
 * A tenant pattern compiled for RE2 (the `re2js` port): an automaton without backtracking, so matching takes time
 * linear in the input whatever the pattern, and no record can stall the moderator. RE2 syntax is that of JavaScript
 * without backreferences and lookaround (refused), and with `\x{e9}` for `\u00e9`; matching is case-insensitive
 * (Unicode case folding), `\w` `\d` `\b` are ASCII, `.` stops at `\n`, and `^` `$` anchor at the ends of the whole
 * field, as in a JavaScript pattern with the `i` flag. Used here (validation) and by the moderator (matching).
 * Throws an Error whose message is written for clients.
 */
export function compilePattern(source: string): RE2JS {
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(source, RE2JS.CASE_INSENSITIVE);
  } catch (err) {
    if (BACKTRACKING_ONLY.test(source)) {
      throw new Error('backreferences and lookaround are not supported: patterns run in linear time (RE2)');
    }
    throw new Error(err instanceof Error ? err.message : 'invalid regular expression');
  }
  if (compiled.programSize() > PATTERN_MAX_PROGRAM_SIZE) {
    throw new Error(`pattern too large: more than ${PATTERN_MAX_PROGRAM_SIZE} RE2 instructions`);
  }
  return compiled;
}

export const PatternStrategy = z
  .strictObject({
    type: z.literal('patterns'),
    /** Regular expressions in RE2 syntax (see compilePattern), matched case-insensitively anywhere in a field. */
    patterns: z.array(z.string().min(1).max(LIMITS.patternLength)).min(1).max(LIMITS.patterns),
  })
  // A pattern the engine cannot compile could never match; refuse it when stored rather than ignore it when judging.
  .superRefine((strategy, ctx) => {
    strategy.patterns.forEach((pattern, index) => {
      try {
        compilePattern(pattern);
      } catch (err) {
        const message = err instanceof Error ? err.message : 'invalid regular expression';
        ctx.addIssue({ code: 'custom', path: ['patterns', index], message });
      }
    });
  });

export const LinkStrategy = z.strictObject({
  type: z.literal('links'),
  /** Domains whose links flag (a domain matches itself and its subdomains). */
  blockedDomains: z.array(z.string().min(1).max(LIMITS.domainLength)).max(LIMITS.domains).default([]),
  /** When non-empty, any link to a domain outside this list flags. */
  allowedDomains: z.array(z.string().min(1).max(LIMITS.domainLength)).max(LIMITS.domains).default([]),
});

/** Categories of the OpenAI moderation API (omni-moderation). */
export const PROVIDER_CATEGORIES = [
  'harassment',
  'harassment/threatening',
  'hate',
  'hate/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/intent',
  'self-harm/instructions',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
] as const;

export const ProviderStrategy = z.strictObject({
  type: z.literal('openai-moderation'),
  /** A category flags when its score is strictly greater than its threshold (0..1). Absent: category ignored. */
  thresholds: z.partialRecord(z.enum(PROVIDER_CATEGORIES), z.number().min(0).max(1)),
});

/**
 * Judged by an LLM behind an OpenAI-compatible chat completions API (the moderator's LLM_* settings). The topic is
 * what reasons name ("Content flagged for <topic>"); the prompt is the tenant's policy, sent with the content.
 */
export const PromptStrategy = z.strictObject({
  type: z.literal('prompt'),
  topic: z.string().trim().min(1).max(LIMITS.promptTopic),
  prompt: z.string().trim().min(1).max(LIMITS.promptText),
});

export const Strategy = z.discriminatedUnion('type', [
  BlocklistStrategy,
  PatternStrategy,
  LinkStrategy,
  ProviderStrategy,
  PromptStrategy,
]);
export type Strategy = z.infer<typeof Strategy>;

export const Rule = z.strictObject({
  /** Stable id, reported in moderation results (`rules`). */
  id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'lowercase letters, digits, - and _; at most 64'),
  name: z.string().min(1).max(LIMITS.ruleName),
  description: z.string().max(LIMITS.ruleDescription).optional(),
  enabled: z.boolean().default(true),
  /** Entities the rule applies to; empty means all. */
  entities: z.array(z.string().min(1).max(LIMITS.entity)).max(LIMITS.ruleEntities).default([]),
  strategies: z.array(Strategy).min(1).max(LIMITS.strategiesPerRule),
  /** Set when the rule was added from a preset: which one, and the version copied (the copy is the tenant's own). */
  presetId: z.string().min(1).max(64).optional(),
  presetVersion: z.number().int().min(1).optional(),
});
export type Rule = z.infer<typeof Rule>;

export const RuleSet = z
  .strictObject({ rules: z.array(Rule).max(LIMITS.rules) })
  .refine((set) => new Set(set.rules.map((rule) => rule.id)).size === set.rules.length, {
    message: 'rule ids must be unique',
    path: ['rules'],
  });
export type RuleSet = z.infer<typeof RuleSet>;

/** What every tenant gets before it configures anything: profanity is flagged out of the box. */
export const DEFAULT_RULES: RuleSet = {
  rules: [
    {
      id: 'profanity',
      name: 'Profanity',
      description: 'English profanity, including common obfuscations.',
      enabled: true,
      entities: [],
      strategies: [{ type: 'blocklist', words: [], wholeWord: false, profanity: true }],
    },
  ],
};

/** Whether a rule set needs the moderator's LLM (a prompt strategy in any rule, enabled or not). */
export function usesPrompts(ruleSet: RuleSet): boolean {
  return ruleSet.rules.some((rule) => rule.strategies.some((strategy) => strategy.type === 'prompt'));
}
