import { z } from 'zod';
import { EmailTemplate } from './emails';
import { DecisionVisibility, Policies } from './policies';
import { TrustedFlaggers } from './reports';

/** Six months, rounded up: the shortest appeal window Art. 20(1) DSA allows. */
export const MIN_APPEAL_WINDOW_DAYS = 183;

/**
 * A reporter's email is kept this long by default: the appeal window, so that the outcome of a complaint made on its
 * last day can still be sent, and a month to decide it.
 */
export const DEFAULT_REPORTER_EMAIL_RETENTION_DAYS = 213;

/**
 * Per-tenant settings: written by the gateway (`PATCH /api/v1/settings`, collection `settings`, `_id` = tenantId),
 * read by the moderator. Missing fields take these defaults.
 */
export const TenantSettings = z.object({
  /** A user is suspended when their flagged records reach this count (Iffy's default 1). */
  suspensionThreshold: z.number().int().min(1).max(10000).default(1),
  /** Moderations are stored and returned but emit no webhook and change no user. Vigil defaults it off. */
  testMode: z.boolean().default(false),
  /**
   * Share of ingested records that are moderated, percent (Iffy's `moderationPercentage`, default 100). The others are
   * stored without a moderation unless the record is Flagged or its user Suspended (Iffy §4.8).
   */
  rolloutPercentage: z.number().int().min(0).max(100).default(100),
  /** User emails on status changes (Iffy §7.2). Off by default; templates left out use DEFAULT_EMAIL_TEMPLATES. */
  emails: z
    .object({
      enabled: z.boolean().default(false),
      templates: z
        .object({
          Suspended: EmailTemplate.optional(),
          Banned: EmailTemplate.optional(),
          Compliant: EmailTemplate.optional(),
        })
        .default({}),
    })
    .default({ enabled: false, templates: {} }),
  /** Organisations whose reports are trusted flaggers' notices (Art. 22 DSA): first in the review queue. */
  trustedFlaggers: TrustedFlaggers.default([]),
  /** The grounds rules and decisions name (`/api/v1/policies`); without any, everything rests on DEFAULT_POLICY. */
  policies: Policies.default([]),
  /** What the platform does to a flagged record's visibility, as its statements of reasons say (TDB values). */
  flaggedVisibility: DecisionVisibility.default('DECISION_VISIBILITY_CONTENT_DISABLED'),
  /** How long a decision can be appealed, days after its statement: at least six months (Art. 20(1) DSA). */
  appealWindowDays: z.number().int().min(MIN_APPEAL_WINDOW_DAYS).max(3650).default(MIN_APPEAL_WINDOW_DAYS),
  /**
   * How long a reporter's email is kept, days after the report: used for the outcome of the report and of a complaint
   * about it, then erased (on the first day after it runs out). Never longer than the tenant configures.
   */
  reporterEmailRetentionDays: z.number().int().min(1).max(3650).default(DEFAULT_REPORTER_EMAIL_RETENTION_DAYS),
  /**
   * A rule whose flags people overturn at this rate or more (0–1), once `ruleDegradedMinReviews` of them were reviewed
   * under one rule set version, raises `rule.degraded`. Null: never.
   */
  ruleDegradedOverturnRate: z.number().min(0).max(1).nullable().default(null),
  ruleDegradedMinReviews: z.number().int().min(1).max(100000).default(20),
});
export type TenantSettings = z.infer<typeof TenantSettings>;

export const DEFAULT_SETTINGS: TenantSettings = {
  suspensionThreshold: 1,
  testMode: false,
  rolloutPercentage: 100,
  emails: { enabled: false, templates: {} },
  trustedFlaggers: [],
  policies: [],
  flaggedVisibility: 'DECISION_VISIBILITY_CONTENT_DISABLED',
  appealWindowDays: MIN_APPEAL_WINDOW_DAYS,
  reporterEmailRetentionDays: DEFAULT_REPORTER_EMAIL_RETENTION_DAYS,
  ruleDegradedOverturnRate: null,
  ruleDegradedMinReviews: 20,
};
