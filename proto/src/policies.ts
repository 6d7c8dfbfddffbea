import { z } from 'zod';
import { LIMITS } from './limits';
import { ReportCategory, ReportGround } from './reports';

/**
 * Policies: the grounds a restriction rests on (Art. 17(3)(d) and (e) DSA). A rule and a moderator's decision name
 * one by id; the policy's grounds are copied onto the decision's event when it is stored, so a statement of reasons
 * reads as it did when the decision was made, whatever the policy says later.
 */

/** The TDB's `decision_visibility` values (`app/Models/Statement.php` of digital-services-act/transparency-database). */
export const DecisionVisibility = z.enum([
  'DECISION_VISIBILITY_CONTENT_REMOVED',
  'DECISION_VISIBILITY_CONTENT_DISABLED',
  'DECISION_VISIBILITY_CONTENT_DEMOTED',
  'DECISION_VISIBILITY_CONTENT_AGE_RESTRICTED',
  'DECISION_VISIBILITY_CONTENT_INTERACTION_RESTRICTED',
  'DECISION_VISIBILITY_CONTENT_LABELLED',
]);
export type DecisionVisibility = z.infer<typeof DecisionVisibility>;

/** The TDB's `decision_account` values. */
export const DecisionAccount = z.enum(['DECISION_ACCOUNT_SUSPENDED', 'DECISION_ACCOUNT_TERMINATED']);
export type DecisionAccount = z.infer<typeof DecisionAccount>;

/** The TDB's `decision_monetary` values Vigil uses (a payout pause). */
export const DecisionMonetary = z.enum(['DECISION_MONETARY_SUSPENSION', 'DECISION_MONETARY_TERMINATION']);
export type DecisionMonetary = z.infer<typeof DecisionMonetary>;

/** The TDB's `automated_decision` values. */
export const AutomatedDecision = z.enum([
  'AUTOMATED_DECISION_FULLY',
  'AUTOMATED_DECISION_PARTIALLY',
  'AUTOMATED_DECISION_NOT_AUTOMATED',
]);
export type AutomatedDecision = z.infer<typeof AutomatedDecision>;

/** The TDB's `source_type` values Vigil produces. */
export const StatementSource = z.enum(['SOURCE_ARTICLE_16', 'SOURCE_TRUSTED_FLAGGER', 'SOURCE_VOLUNTARY']);
export type StatementSource = z.infer<typeof StatementSource>;

/** Placeholders a policy's explanation may use, written `{{name}}`. */
export const POLICY_PLACEHOLDERS = ['policy', 'rules', 'via'] as const;
const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;

export const POLICY_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;

const PolicyFields = z.strictObject({
  /** Stable id that rules and decisions name. `default` replaces the built-in default policy. */
  id: z.string().regex(POLICY_ID, 'lowercase letters, digits, - and _; at most 64'),
  name: z.string().trim().min(1).max(LIMITS.policyName),
  /** Illegal content (then `legalGround` names the law) or content incompatible with the terms. */
  ground: ReportGround,
  /** The law relied on, for `ILLEGAL_CONTENT` (the TDB's `illegal_content_legal_ground`). */
  legalGround: z.string().trim().min(1).max(LIMITS.reportLegalGround).optional(),
  /** The TDB's statement category. */
  category: ReportCategory,
  /**
   * Why content under this policy is restricted, told to the user (the TDB's `…_explanation`). Placeholders:
   * `{{policy}}` (the policy's name), `{{rules}}` (the rules that matched), `{{via}}` (how it was decided).
   */
  explanation: z
    .string()
    .trim()
    .min(1)
    .max(LIMITS.policyExplanation)
    .refine(
      (text) =>
        [...text.matchAll(PLACEHOLDER)].every((m) => (POLICY_PLACEHOLDERS as readonly string[]).includes(m[1] ?? '')),
      {
        message: `only the placeholders ${POLICY_PLACEHOLDERS.map((p) => `{{${p}}}`).join(', ')} are allowed`,
      },
    ),
  /** The terms or the law relied on (the TDB's `decision_ground_reference_url`). */
  referenceUrl: z
    .url({ protocol: /^https?$/ })
    .max(LIMITS.url)
    .optional(),
});

function checkGround(policy: { ground: ReportGround; legalGround?: string | undefined }, ctx: z.RefinementCtx): void {
  if (policy.ground === 'ILLEGAL_CONTENT' && policy.legalGround === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['legalGround'],
      message: 'a policy on illegal content names its legal ground',
    });
  }
  if (policy.ground === 'INCOMPATIBLE_CONTENT' && policy.legalGround !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['legalGround'],
      message: 'only a policy on illegal content has a legal ground',
    });
  }
}

export const Policy = PolicyFields.superRefine(checkGround);
export type Policy = z.infer<typeof Policy>;
/** A change to a policy: the fields given replace the stored ones (`legalGround: null` removes it). */
export const PolicyPatch = PolicyFields.omit({ id: true })
  .partial()
  .extend({ legalGround: PolicyFields.shape.legalGround.unwrap().nullable().optional() });
export type PolicyPatch = z.infer<typeof PolicyPatch>;

export const Policies = z
  .array(Policy)
  .max(LIMITS.policies)
  .refine((list) => new Set(list.map((policy) => policy.id)).size === list.length, {
    message: 'policy ids are unique',
  });

/** The policy of a tenant that has none, and of rules and decisions that name none. */
export const DEFAULT_POLICY: Policy = {
  id: 'default',
  name: 'Terms of service',
  ground: 'INCOMPATIBLE_CONTENT',
  category: 'STATEMENT_CATEGORY_OTHER_VIOLATION_TC',
  explanation: 'The content is incompatible with the terms of service of the platform.',
};

/** What a decision's event keeps of its policy: the grounds as they were when the decision was made. */
export const PolicyGrounds = z.object({
  policyId: z.string(),
  name: z.string(),
  ground: ReportGround,
  legalGround: z.string().optional(),
  category: ReportCategory,
  explanation: z.string(),
  referenceUrl: z.string().optional(),
});
export type PolicyGrounds = z.infer<typeof PolicyGrounds>;

export function groundsOf(policy: Policy): PolicyGrounds {
  return {
    policyId: policy.id,
    name: policy.name,
    ground: policy.ground,
    ...(policy.legalGround !== undefined ? { legalGround: policy.legalGround } : {}),
    category: policy.category,
    explanation: policy.explanation,
    ...(policy.referenceUrl !== undefined ? { referenceUrl: policy.referenceUrl } : {}),
  };
}

/** Fills a policy's explanation; unknown placeholders were refused when the policy was written. */
export function renderExplanation(
  template: string,
  values: Partial<Record<(typeof POLICY_PLACEHOLDERS)[number], string>>,
): string {
  return template.replace(
    PLACEHOLDER,
    (_m, name: string) => values[name as (typeof POLICY_PLACEHOLDERS)[number]] ?? '',
  );
}
