import type { Context } from 'koa';
import type { z } from 'zod';
import type { ApiRouter, RouteSpec } from '../../http/api-router';
import { query } from '../../http/validate';

/** The page a list query asks for, as the moderator's list calls name it. */
export interface PageRequest {
  limit: number;
  startingAfter: string | undefined;
}

/**
 * A GET route that lists a resource with cursor pagination: it parses `spec.query`, hands `list` the parsed query and
 * the page it asks for, and answers `{ data, has_more }` with 200.
 */
export function listRoute<Q extends z.ZodType<{ limit: number; starting_after?: string }>, T>(
  api: ApiRouter,
  spec: Omit<RouteSpec, 'method' | 'status' | 'query'> & { query: Q },
  list: (ctx: Context, q: z.output<Q>, page: PageRequest) => Promise<{ data: T[]; hasMore: boolean }>,
): void {
  api.route({ ...spec, method: 'get', status: 200 }, async (ctx) => {
    const q = query(ctx, spec.query);
    const { data, hasMore } = await list(ctx, q, { limit: q.limit, startingAfter: q.starting_after });
    ctx.body = { data, has_more: hasMore };
  });
}
