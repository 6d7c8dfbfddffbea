import { z } from 'zod';
import { EmailTemplate } from './emails';

/**
 * Per-tenant settings: written by the gateway (`PATCH /api/v1/settings`, collection `settings`, `_id` = tenantId),
 * read by the moderator. Missing fields take these defaults.
 */
export const TenantSettings = z.object({
  /** A user is suspended when their flagged records reach this count (Iffy's default 1). */
  suspensionThreshold: z.number().int().min(1).max(10000).default(1),
  /** Moderations are stored and returned but emit no webhook and change no user. Vigil defaults it off. */
  testMode: z.boolean().default(false),
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
});
export type TenantSettings = z.infer<typeof TenantSettings>;

export const DEFAULT_SETTINGS: TenantSettings = {
  suspensionThreshold: 1,
  testMode: false,
  emails: { enabled: false, templates: {} },
};
