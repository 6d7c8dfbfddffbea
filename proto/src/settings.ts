import { z } from 'zod';

/**
 * Per-tenant settings: written by the gateway (`PATCH /api/v1/settings`, collection `settings`, `_id` = tenantId),
 * read by the moderator. Missing fields take these defaults.
 */
export const TenantSettings = z.object({
  /** A user is suspended when their flagged records reach this count (Iffy's default 1). */
  suspensionThreshold: z.number().int().min(1).max(10000).default(1),
  /** Moderations are stored and returned but emit no webhook and change no user. Vigil defaults it off. */
  testMode: z.boolean().default(false),
});
export type TenantSettings = z.infer<typeof TenantSettings>;

export const DEFAULT_SETTINGS: TenantSettings = { suspensionThreshold: 1, testMode: false };
