import { z } from 'zod';
import { LIMITS } from './limits';

/**
 * The Transparency Database's statement categories (`app/Models/Statement.php` of
 * digital-services-act/transparency-database, the values in force since the 2025 template alignment). A report names
 * one, so that the statement of reasons and the transparency report of a later step can use it as it is.
 */
export const ReportCategory = z.enum([
  'STATEMENT_CATEGORY_ANIMAL_WELFARE',
  'STATEMENT_CATEGORY_CONSUMER_INFORMATION',
  'STATEMENT_CATEGORY_CYBER_VIOLENCE',
  'STATEMENT_CATEGORY_CYBER_VIOLENCE_AGAINST_WOMEN',
  'STATEMENT_CATEGORY_DATA_PROTECTION_AND_PRIVACY_VIOLATIONS',
  'STATEMENT_CATEGORY_ILLEGAL_OR_HARMFUL_SPEECH',
  'STATEMENT_CATEGORY_INTELLECTUAL_PROPERTY_INFRINGEMENTS',
  'STATEMENT_CATEGORY_NEGATIVE_EFFECTS_ON_CIVIC_DISCOURSE_OR_ELECTIONS',
  'STATEMENT_CATEGORY_NOT_SPECIFIED_NOTICE',
  'STATEMENT_CATEGORY_OTHER_VIOLATION_TC',
  'STATEMENT_CATEGORY_PROTECTION_OF_MINORS',
  'STATEMENT_CATEGORY_RISK_FOR_PUBLIC_SECURITY',
  'STATEMENT_CATEGORY_SCAMS_AND_FRAUD',
  'STATEMENT_CATEGORY_SELF_HARM',
  'STATEMENT_CATEGORY_UNSAFE_AND_PROHIBITED_PRODUCTS',
  'STATEMENT_CATEGORY_VIOLENCE',
]);
export type ReportCategory = z.infer<typeof ReportCategory>;

/**
 * What the reporter claims: content illegal under a law (a notice under Art. 16 DSA, with its legal ground, exact URL
 * and good-faith statement), or content incompatible with the platform's terms. The TDB's `decision_ground` values
 * without their prefix.
 */
export const ReportGround = z.enum(['ILLEGAL_CONTENT', 'INCOMPATIBLE_CONTENT']);
export type ReportGround = z.infer<typeof ReportGround>;

export const ReportStatus = z.enum(['Open', 'Decided']);
export type ReportStatus = z.infer<typeof ReportStatus>;

/** `Actioned`: the target was flagged, suspended or banned; `NoAction`: a person decided not to act, with a reason. */
export const ReportOutcome = z.enum(['Actioned', 'NoAction']);
export type ReportOutcome = z.infer<typeof ReportOutcome>;

/**
 * A reporter's complaint about a decision not to act (Art. 20 DSA), decided by a person: `Upheld` acts on the target
 * after all (a flag, a suspension or a ban, like acting on the report), `Rejected` keeps the decision not to act.
 */
export const ComplaintOutcome = z.enum(['Upheld', 'Rejected']);
export type ComplaintOutcome = z.infer<typeof ComplaintOutcome>;

export const ComplaintStatus = z.enum(['Open', 'Upheld', 'Rejected']);
export type ComplaintStatus = z.infer<typeof ComplaintStatus>;

/** What acting on a report did: flag the reported record, or suspend or ban the reported user. */
export const ReportAction = z.enum(['Flag', 'Suspend', 'Ban']);
export type ReportAction = z.infer<typeof ReportAction>;

export const ReportTargetType = z.enum(['record', 'user']);
export type ReportTargetType = z.infer<typeof ReportTargetType>;

/** An end user of the platform (by the platform's id for them), or an organisation the tenant lists as trusted. */
export const ReporterType = z.enum(['user', 'trusted_flagger']);
export type ReporterType = z.infer<typeof ReporterType>;

/** A trusted flagger (Art. 22 DSA) as the tenant's settings list it: its notices are reviewed first. */
const TrustedFlagger = z.object({
  id: z
    .string()
    .min(1)
    .max(LIMITS.trustedFlaggerId)
    .regex(/^[A-Za-z0-9_.:-]+$/, 'letters, digits, _ . : and - only'),
  name: z.string().min(1).max(LIMITS.trustedFlaggerName),
});
export type TrustedFlagger = z.infer<typeof TrustedFlagger>;

export const TrustedFlaggers = z
  .array(TrustedFlagger)
  .max(LIMITS.trustedFlaggers)
  .refine((list) => new Set(list.map((flagger) => flagger.id)).size === list.length, {
    message: 'trusted flagger ids are unique',
  });
