import safeRegex from 'safe-regex2';
import { z } from 'zod';
import { LIMITS } from './limits';

/**
 * A tenant's rule set: written by the gateway (`PUT /api/v1/rules`, collection `rules`, one document per tenant with
 * `_id` = tenantId), read by the moderator. A tenant without a document uses DEFAULT_RULES.
 */
export const BlocklistStrategy = z.object({
  type: z.literal('blocklist'),
  /** Tenant words or phrases; matched case-insensitively. */
  words: z.array(z.string().min(1).max(LIMITS.wordLength)).max(LIMITS.words).default([]),
  /** Match whole words only (\bword\b) instead of substrings. */
  wholeWord: z.boolean().default(false),
  /** Also use the `obscenity` English profanity matcher (catches obfuscated variants). */
  profanity: z.boolean().default(false),
});

/** Flags every pattern is compiled with, here (validation) and in the moderator (matching). */
export const PATTERN_FLAGS = 'i';

export const PatternStrategy = z
  .object({
    type: z.literal('patterns'),
    /** JavaScript regular expressions (source), matched case-insensitively. */
    patterns: z.array(z.string().min(1).max(LIMITS.patternLength)).min(1).max(LIMITS.patterns),
  })
  // A pattern that does not compile could never match; refuse it when stored rather than ignore it when judging.
  // Nested repetition such as `(a+)+$` can take exponential time on a crafted record and would stall the moderator
  // for every tenant: refused too (star height above one, or more than 25 repetitions).
  .superRefine((strategy, ctx) => {
    strategy.patterns.forEach((pattern, index) => {
      let message: string | undefined;
      try {
        const compiled = new RegExp(pattern, PATTERN_FLAGS);
        if (!safeRegex(compiled)) message = 'nested or excessive repetition could take exponential time';
      } catch (err) {
        message = err instanceof Error ? err.message : 'invalid regular expression';
      }
      if (message) ctx.addIssue({ code: 'custom', path: ['patterns', index], message });
    });
  });

export const LinkStrategy = z.object({
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

export const ProviderStrategy = z.object({
  type: z.literal('openai-moderation'),
  /** A category flags when its score is strictly greater than its threshold (0..1). Absent: category ignored. */
  thresholds: z.partialRecord(z.enum(PROVIDER_CATEGORIES), z.number().min(0).max(1)),
});

export const Strategy = z.discriminatedUnion('type', [
  BlocklistStrategy,
  PatternStrategy,
  LinkStrategy,
  ProviderStrategy,
]);
export type Strategy = z.infer<typeof Strategy>;

export const Rule = z.object({
  /** Stable id, reported in moderation results (`rules`). */
  id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'lowercase letters, digits, - and _; at most 64'),
  name: z.string().min(1).max(LIMITS.ruleName),
  description: z.string().max(LIMITS.ruleDescription).optional(),
  enabled: z.boolean().default(true),
  /** Entities the rule applies to; empty means all. */
  entities: z.array(z.string().min(1).max(LIMITS.entity)).max(LIMITS.ruleEntities).default([]),
  strategies: z.array(Strategy).min(1).max(LIMITS.strategiesPerRule),
});
export type Rule = z.infer<typeof Rule>;

export const RuleSet = z
  .object({ rules: z.array(Rule).max(LIMITS.rules) })
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
