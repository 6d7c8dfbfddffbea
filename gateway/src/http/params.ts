import type { Context } from 'koa';
import { NotFoundError } from '../errors';

// Path parameters as routes and console pages read them: a value that cannot name anything is a 404, not a 400.

/**
 * The `:id` path parameter (set by the router on every route that declares it). Every id Vigil issues is letters,
 * digits, `_` and `-`; anything else names nothing (and a NUL could not even be looked up), so it is a 404.
 */
export const idParam = (ctx: Context): string => {
  const id = String((ctx.params as Record<string, string>).id ?? '');
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(id)) throw new NotFoundError('not found');
  return id;
};

/** The `:version` path parameter: a rule set version number. */
export function versionParam(ctx: Context): number {
  const raw = String((ctx.params as Record<string, string>).version ?? '');
  if (!/^\d{1,9}$/.test(raw)) throw new NotFoundError('rule set version not found');
  return Number(raw);
}
