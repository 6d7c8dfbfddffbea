import { POLICY_ID } from '../policies';
import { z } from 'zod';
import { LIMITS, RULE_SET_BUDGET } from '../limits';
import { compilePattern, PATTERN_MAX_PROGRAM_SIZE, PII_CATEGORIES } from './pattern';

/**
 * A tenant's rule set: written by the gateway (`PUT /api/v1/rules`, collection `rules`, one document per tenant with
 * `_id` = tenantId), read by the moderator. A tenant without a document uses DEFAULT_RULES.
 */
const BlocklistStrategy = z.strictObject({
  type: z.literal('blocklist'),
  /** Tenant words or phrases; matched case-insensitively. */
  words: z.array(z.string().min(1).max(LIMITS.wordLength)).max(LIMITS.words).default([]),
  /** Match whole words only (\bword\b) instead of substrings. */
  wholeWord: z.boolean().default(false),
  /** Also use the `obscenity` English profanity matcher (catches obfuscated variants). */
  profanity: z.boolean().default(false),
});

const PatternStrategy = z.strictObject({
  type: z.literal('patterns'),
  /**
   * Regular expressions in RE2 syntax (see compilePattern), matched case-insensitively anywhere in a field. Each must
   * compile (checked with the rule set's budget, see RuleSet).
   */
  patterns: z.array(z.string().min(1).max(LIMITS.patternLength)).min(1).max(LIMITS.patterns),
});

const LinkStrategy = z.strictObject({
  type: z.literal('links'),
  /** Domains whose links flag (a domain matches itself and its subdomains). */
  blockedDomains: z.array(z.string().min(1).max(LIMITS.domainLength)).max(LIMITS.domains).default([]),
  /** When non-empty, any link to a domain outside this list flags. */
  allowedDomains: z.array(z.string().min(1).max(LIMITS.domainLength)).max(LIMITS.domains).default([]),
});

/**
 * Contact details in the record's text, found through common evasions (spelled or spaced digits, "at"/"dot",
 * look-alike characters, keycap digits); judged by the moderator's own detector (docs/engine.md, "Contact details").
 * Each match is a reason with its category and span. `mask`: a moderation answered to the caller (`POST /moderate`)
 * carries the text with every detail given replaced by `[contact removed]`. `regions`: ISO 3166 country codes whose
 * national phone formats count (numbers written with + or 00 count whatever their country); empty means US, GB, CA,
 * AU and IN.
 */
export const PiiStrategy = z.strictObject({
  type: z.literal('pii'),
  categories: z
    .array(z.enum(PII_CATEGORIES))
    .min(1)
    .max(PII_CATEGORIES.length)
    .default([...PII_CATEGORIES]),
  mask: z.boolean().default(false),
  regions: z
    .array(z.string().regex(/^[A-Z]{2}$/, 'an ISO 3166-1 alpha-2 country code in capitals'))
    .max(LIMITS.piiRegions)
    .default([]),
});

/** Categories of the OpenAI moderation API (omni-moderation). */
const PROVIDER_CATEGORIES = [
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

const ProviderStrategy = z.strictObject({
  type: z.literal('openai-moderation'),
  /** A category flags when its score is strictly greater than its threshold (0..1). Absent: category ignored. */
  thresholds: z.partialRecord(z.enum(PROVIDER_CATEGORIES), z.number().min(0).max(1)),
});

/**
 * Judged by an LLM behind an OpenAI-compatible chat completions API (the moderator's LLM_* settings). The topic is
 * what reasons name ("Content flagged for <topic>"); the prompt is the tenant's policy, sent with the content.
 */
const PromptStrategy = z.strictObject({
  type: z.literal('prompt'),
  topic: z.string().trim().min(1).max(LIMITS.promptTopic),
  prompt: z.string().trim().min(1).max(LIMITS.promptText),
  /** Do not send the record's sampled images with the prompt (they are sent to a vision-capable model by default). */
  skipImages: z.boolean().default(false),
});

/** Classes of the bundled image model (nsfwjs, MobileNetV2Mid). */
export const IMAGE_CLASSES = ['Drawing', 'Hentai', 'Neutral', 'Porn', 'Sexy'] as const;
export type ImageClass = (typeof IMAGE_CLASSES)[number];

/**
 * Judged by the moderator's bundled image model, offline: each of the record's sampled images (at most the
 * moderator's IMAGE_MAX_PER_RECORD, 3 by default) is fetched under the webhook address policy and classified. A class
 * flags when its probability is strictly greater than its threshold (0..1). `onFetchError`: an image that cannot be
 * fetched or decoded is ignored (default) or flags the record for review.
 */
const ImageStrategy = z.strictObject({
  type: z.literal('images'),
  thresholds: z.partialRecord(z.enum(IMAGE_CLASSES), z.number().min(0).max(1)),
  onFetchError: z.enum(['ignore', 'flag']).default('ignore'),
});

/**
 * Reads the text in the record's sampled images (OCR, offline: tesseract.js with its English model, in the
 * moderator's image threads), so that every text strategy of the rule set (blocklists, patterns, links, PII, prompt
 * and provider rules) judges it too: each image's text is a field of its own, and a reason names the image ("Image 2's
 * text contains blocked word: X"). It flags nothing itself, except with `onTimeout: "flag"`: an image whose text was
 * not read in time (the caller's deadline or the moderator's IMAGE_OCR_BUDGET_MS) flags the record for review. By
 * default the record is judged on the texts read in time, and the moderation's `images` say which were not.
 */
const ImageTextStrategy = z.strictObject({
  type: z.literal('image-text'),
  onTimeout: z.enum(['ignore', 'flag']).default('ignore'),
});

export const Strategy = z.discriminatedUnion('type', [
  BlocklistStrategy,
  PatternStrategy,
  LinkStrategy,
  ProviderStrategy,
  PromptStrategy,
  ImageStrategy,
  PiiStrategy,
  ImageTextStrategy,
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
  /** The policy (`/api/v1/policies`) a flag by this rule rests on; the default policy when absent. */
  policy: z.string().regex(POLICY_ID, 'a policy id').optional(),
  /**
   * Runs on live traffic beside the live rules without acting: its matches change no status and are only counted
   * (docs/rules-safely.md, "Shadow rules"). Only its blocklist, pattern and link strategies run.
   */
  shadow: z.boolean().optional(),
});
export type Rule = z.infer<typeof Rule>;

const RuleList = z.array(Rule).max(LIMITS.rules);

/**
 * A rule set as stored, without the budget: what readers accept, so that a set stored before the budget existed (or
 * grew) is still applied as written; the moderator bounds each record's checks in time whatever the set holds.
 */
export const StoredRuleSet = z.object({ rules: RuleList });

/** Unique rule ids and the budget of the whole set. */
function checkRuleSet(set: { rules: Rule[] }, ctx: z.RefinementCtx): void {
  if (new Set(set.rules.map((rule) => rule.id)).size !== set.rules.length) {
    ctx.addIssue({ code: 'custom', path: ['rules'], message: 'rule ids must be unique' });
  }
  for (const issue of ruleSetBudgetIssues(set)) ctx.addIssue({ code: 'custom', ...issue });
}

const BUDGET_DESCRIPTION =
  `Budget of the whole rule set: at most ${RULE_SET_BUDGET.strategies} strategies, ${RULE_SET_BUDGET.words} ` +
  `blocklist words, ${RULE_SET_BUDGET.patterns} patterns compiling to ${RULE_SET_BUDGET.patternInstructions} ` +
  `RE2 instructions, ${RULE_SET_BUDGET.domains} domains and ${RULE_SET_BUDGET.prompts} prompt strategies in all.`;

export const RuleSet = z
  .strictObject({ rules: RuleList })
  .superRefine(checkRuleSet)
  .meta({ description: BUDGET_DESCRIPTION });
/** A rule set as written through the API: each write is a new version, with an optional note saying why. */
export const RuleSetChange = z
  .strictObject({
    rules: RuleList,
    note: z.string().trim().min(1).max(LIMITS.ruleVersionNote).optional(),
  })
  .superRefine(checkRuleSet)
  .meta({ description: BUDGET_DESCRIPTION });
export type RuleSet = z.infer<typeof RuleSet>;

export interface BudgetIssue {
  path: (string | number)[];
  message: string;
}

/**
 * Where a rule set exceeds its budget (RULE_SET_BUDGET), and every pattern that does not compile. Counting comes
 * first and costs nothing; patterns are compiled only while the counts and the instructions compiled so far are
 * within the budget, so that checking the largest body costs about what checking the largest admitted set does (a
 * pattern costs about 2 µs per instruction to compile). Tolerates a partly invalid set (other issues are reported by
 * the schema itself).
 */
export function ruleSetBudgetIssues(set: { rules: readonly Rule[] }): BudgetIssue[] {
  const issues: BudgetIssue[] = [];
  const totals = { strategies: 0, words: 0, patterns: 0, domains: 0, prompts: 0 };
  for (const rule of set.rules) {
    for (const strategy of rule.strategies ?? []) {
      totals.strategies += 1;
      if (strategy.type === 'blocklist') totals.words += strategy.words?.length ?? 0;
      else if (strategy.type === 'patterns') totals.patterns += strategy.patterns?.length ?? 0;
      else if (strategy.type === 'links') {
        totals.domains += (strategy.blockedDomains?.length ?? 0) + (strategy.allowedDomains?.length ?? 0);
      } else if (strategy.type === 'prompt') totals.prompts += 1;
    }
  }
  const names = {
    strategies: 'strategies',
    words: 'blocklist words',
    patterns: 'patterns',
    domains: 'domains',
    prompts: 'prompt strategies',
  } as const;
  for (const key of Object.keys(totals) as (keyof typeof totals)[]) {
    if (totals[key] > RULE_SET_BUDGET[key]) {
      issues.push({
        path: ['rules'],
        message: `the rule set holds ${totals[key]} ${names[key]} in all; its budget is ${RULE_SET_BUDGET[key]}`,
      });
    }
  }
  if (totals.patterns > RULE_SET_BUDGET.patterns) return issues;

  let instructions = 0;
  for (const [ruleIndex, rule] of set.rules.entries()) {
    for (const [strategyIndex, strategy] of (rule.strategies ?? []).entries()) {
      if (strategy.type !== 'patterns') continue;
      for (const [index, pattern] of (strategy.patterns ?? []).entries()) {
        if (typeof pattern !== 'string') continue;
        if (instructions > RULE_SET_BUDGET.patternInstructions) {
          issues.push({
            path: ['rules'],
            message:
              `the rule set's patterns compile to more than ${RULE_SET_BUDGET.patternInstructions} RE2 ` +
              `instructions in all (pattern ${index} of rule ${ruleIndex} and those after it were not checked)`,
          });
          return issues;
        }
        try {
          instructions += compilePattern(pattern).programSize();
        } catch (err) {
          // A refused pattern still spent compile time: it counts as the largest accepted one.
          instructions += PATTERN_MAX_PROGRAM_SIZE;
          const message = err instanceof Error ? err.message : 'invalid regular expression';
          issues.push({ path: ['rules', ruleIndex, 'strategies', strategyIndex, 'patterns', index], message });
        }
      }
    }
  }
  if (instructions > RULE_SET_BUDGET.patternInstructions) {
    issues.push({
      path: ['rules'],
      message: `the rule set's patterns compile to ${instructions} RE2 instructions in all; its budget is ${RULE_SET_BUDGET.patternInstructions}`,
    });
  }
  return issues;
}

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
