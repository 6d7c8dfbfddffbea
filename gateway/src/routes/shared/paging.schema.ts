import { z } from 'zod';
import { LIMITS } from '@vigil/proto';

/** Cursor pagination shared by list routes (Stripe's names, Iffy's limits). */
export const paging = {
  limit: z.coerce.number().int().min(1).max(100).default(10),
  starting_after: z.string().min(1).max(LIMITS.queryId).optional(),
  ending_before: z.string().min(1).max(LIMITS.queryId).optional(),
};

/** `{ data, has_more }`. */
export const listOf = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item), has_more: z.boolean() });
export const dataOf = <T extends z.ZodType>(item: T) => z.object({ data: item });

/** A stored metadata JSON text back to an object; anything unreadable reads as empty. */
export function parseMetadata(json: string | undefined): Record<string, unknown> {
  if (!json) return {};
  try {
    const value = JSON.parse(json) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
