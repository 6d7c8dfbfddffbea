import { z } from 'zod';
import { RuleSet, TenantSettings } from '@vigil/proto';

/** The whole rule set replaces the stored one (PUT). */
export const RulesBody = RuleSet;
/** Every settings field optional, none defaulted: only what is sent changes. */
export const SettingsPatchBody = z.strictObject({
  suspensionThreshold: TenantSettings.shape.suspensionThreshold.removeDefault().optional(),
  testMode: TenantSettings.shape.testMode.removeDefault().optional(),
  rolloutPercentage: TenantSettings.shape.rolloutPercentage.removeDefault().optional(),
});
export const SettingsView = TenantSettings;
