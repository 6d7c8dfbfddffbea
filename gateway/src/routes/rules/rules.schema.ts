import { z } from 'zod';
import { EmailTemplate, RuleSet, Strategy, TenantSettings } from '@vigil/proto';

/** The whole rule set replaces the stored one (PUT). */
export const RulesBody = RuleSet;
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
          Suspended: EmailTemplate.nullable().optional(),
          Banned: EmailTemplate.nullable().optional(),
          Compliant: EmailTemplate.nullable().optional(),
        })
        .optional(),
    })
    .optional(),
});
export const SettingsView = TenantSettings;

/** A preset as listed: what adding it copies into the tenant's rule set. */
export const PresetView = z.object({
  id: z.string(),
  version: z.number().int(),
  name: z.string(),
  description: z.string(),
  strategies: z.array(Strategy),
});
export const PresetList = z.object({ presets: z.array(PresetView) });
