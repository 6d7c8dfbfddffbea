import { z } from 'zod';
import { EmailTemplate, TenantSettings } from '@vigil/proto';
import { StripeSecretKey } from './stripe-secret-key';
import { Rule, RuleSet, RuleSetChange, StoredRuleSet, Strategy } from '@vigil/proto/rules';
import { dataOf, listOf, paging } from '../shared/paging.schema';

/** A whole rule set (the console's editor). */
export const RulesBody = RuleSet;
/** The whole rule set replaces the live one as a new version (PUT), or is saved as a draft version. */
export const RuleSetChangeBody = RuleSetChange;
const VersionNumber = z.number().int().nonnegative().meta({
  description: 'The rule set version: 1, 2, 3… per tenant; 0 is the default set (or one from before versions).',
});
/** The live rule set and its version. */
export const LiveRulesView = StoredRuleSet.extend({ version: VersionNumber });
const VersionSummary = z.object({
  version: VersionNumber,
  kind: z
    .enum(['live', 'draft'])
    .meta({ description: 'How it was written: live (it judged from then on) or a draft.' }),
  live: z.boolean().meta({ description: 'It is the live rule set now.' }),
  author: z.string().meta({ description: '`api_key:<keyId>` or `member:<memberId>`.' }),
  note: z.string().optional(),
  basedOn: VersionNumber.optional().meta({ description: 'A roll-back: the version whose rules it copies.' }),
  createdAt: z.string(),
});
export const RuleVersionList = listOf(VersionSummary);
export const RuleVersionData = dataOf(VersionSummary.extend({ rules: z.array(Rule) }));
export const RuleVersionListQuery = z.object({
  limit: paging.limit,
  starting_after: z.coerce
    .number()
    .int()
    .positive()
    .optional()
    .meta({ description: 'A version number: the page lists older ones.' }),
});
export const RollBackBody = z.strictObject({ note: RuleSetChange.shape.note });
export const DiffQuery = z.object({
  to: z.coerce
    .number()
    .int()
    .nonnegative()
    .optional()
    .meta({ description: 'The version to compare with; the live one when absent.' }),
});
export const RuleSetDiffView = z.object({
  from: VersionNumber,
  to: VersionNumber,
  added: z.array(Rule).meta({ description: 'Rules of `to` whose id `from` has not.' }),
  removed: z.array(Rule).meta({ description: 'Rules of `from` whose id `to` has not.' }),
  changed: z.array(z.object({ id: z.string(), from: Rule, to: Rule })),
  unchanged: z.array(z.string()).meta({ description: 'Ids of the rules the same in both.' }),
});
/** A template as sent: an unknown field (a misspelt `subjet`, a `footer` there is none of) is refused, not dropped. */
const EmailTemplateBody = z.strictObject(EmailTemplate.shape);
/** Every settings field optional, none defaulted: only what is sent changes. */
export const SettingsPatchBody = z.strictObject({
  suspensionThreshold: TenantSettings.shape.suspensionThreshold.removeDefault().optional(),
  testMode: TenantSettings.shape.testMode.removeDefault().optional(),
  rolloutPercentage: TenantSettings.shape.rolloutPercentage.removeDefault().optional(),
  /** User emails: `enabled`, and templates per kind (null restores the default). */
  emails: z
    .strictObject({
      enabled: z.boolean().optional(),
      templates: z
        .strictObject({
          Suspended: EmailTemplateBody.nullable().optional(),
          Banned: EmailTemplateBody.nullable().optional(),
          Compliant: EmailTemplateBody.nullable().optional(),
        })
        .optional(),
    })
    .optional(),
  /** The whole list of trusted flaggers (Art. 22 DSA); it replaces the stored one. */
  trustedFlaggers: TenantSettings.shape.trustedFlaggers.removeDefault().optional(),
  /** What a flag does to a record's visibility, as statements of reasons say it (the platform applies it). */
  flaggedVisibility: TenantSettings.shape.flaggedVisibility.removeDefault().optional(),
  /** Days a decision can be appealed after its statement of reasons: 183 (six months) or more. */
  appealWindowDays: TenantSettings.shape.appealWindowDays.removeDefault().optional(),
  /** Days a reporter's email is kept after the report, for the outcome emails; then it is erased. */
  reporterEmailRetentionDays: TenantSettings.shape.reporterEmailRetentionDays.removeDefault().optional(),
  /** `rule.degraded`: the overturn rate (0–1) a rule's reviewed flags must reach, or null for never. */
  ruleDegradedOverturnRate: TenantSettings.shape.ruleDegradedOverturnRate.removeDefault().optional(),
  /** `rule.degraded`: reviews of the rule's flags under one version needed before it can be raised. */
  ruleDegradedMinReviews: TenantSettings.shape.ruleDegradedMinReviews.removeDefault().optional(),
  /** Payment enforcement: the tenant's Stripe key (null removes it). Stored encrypted, never shown again in full. */
  payments: z
    .strictObject({
      stripeSecretKey: StripeSecretKey.nullable()
        .optional()
        .meta({ description: 'sk_test_…, sk_live_…, rk_test_… or rk_live_…; null removes the stored key.' }),
    })
    .optional(),
});
export const SettingsView = TenantSettings.extend({
  payments: z.object({
    stripeSecretKey: z
      .string()
      .nullable()
      .meta({ description: 'The stored key as a hint (`sk_live_…Ab12`), or null when none is stored.' }),
  }),
});

/** A preset as listed: what adding it copies into the tenant's rule set. */
const PresetView = z.object({
  id: z.string(),
  version: z.number().int(),
  name: z.string(),
  description: z.string(),
  strategies: z.array(Strategy),
});
export const PresetList = z.object({ presets: z.array(PresetView) });
