import { z } from 'zod';
import { EmailTemplate, RuleSet, Strategy, StripeSecretKey, TenantSettings } from '@vigil/proto';

/** The whole rule set replaces the stored one (PUT). */
export const RulesBody = RuleSet;
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
export const PresetView = z.object({
  id: z.string(),
  version: z.number().int(),
  name: z.string(),
  description: z.string(),
  strategies: z.array(Strategy),
});
export const PresetList = z.object({ presets: z.array(PresetView) });
