import { z } from 'zod';
import { EmailTemplate, RuleSet, TenantSettings } from '@vigil/proto';

/** The whole rule set replaces the stored one (PUT). */
export const RulesBody = RuleSet;
/** Every settings field optional, none defaulted: only what is sent changes. */
export const SettingsPatchBody = z.strictObject({
  suspensionThreshold: TenantSettings.shape.suspensionThreshold.removeDefault().optional(),
  testMode: TenantSettings.shape.testMode.removeDefault().optional(),
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
