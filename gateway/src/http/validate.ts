import type { Context } from 'koa';
import type { z } from 'zod';
import { ValidationError, type Issue } from '../errors';

type ZodIssue = z.core.$ZodIssue;
const segments = (path: PropertyKey[]): Array<string | number> =>
  path.map((segment) => (typeof segment === 'symbol' ? String(segment) : segment));

/**
 * A failed union (e.g. content: string or object) reports the issues of the branch the value was meant for: branches
 * that failed only because the value has another type are left out. When every branch is such a mismatch the union's
 * own issue stands.
 */
function flatten(issue: ZodIssue, prefix: PropertyKey[]): Issue[] {
  const path = [...prefix, ...issue.path];
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    const typeMismatch = (branch: ZodIssue[]) =>
      branch.length === 1 && branch[0]?.code === 'invalid_type' && branch[0].path.length === 0;
    const meant = issue.errors.filter((branch) => !typeMismatch(branch));
    if (meant.length > 0) return meant.flat().flatMap((inner) => flatten(inner, path));
  }
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({ path: segments([...path, key]), message: 'unknown field', code: issue.code }));
  }
  return [{ path: segments(path), message: issue.message, code: issue.code }];
}

/** Every zod issue, each with its path into the request. */
export function issuesOf(error: z.ZodError): Issue[] {
  return error.issues.flatMap((issue) => flatten(issue, []));
}

export function parseWith<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw new ValidationError(`invalid ${what}`, issuesOf(result.error));
  return result.data;
}

/** The parsed JSON body; an absent body validates as `{}` so that every missing field is reported. */
export function body<S extends z.ZodType>(ctx: Context, schema: S): z.output<S> {
  return parseWith(schema, (ctx.request as { body?: unknown }).body ?? {}, 'request body');
}

export function query<S extends z.ZodType>(ctx: Context, schema: S): z.output<S> {
  return parseWith(schema, ctx.query, 'query parameters');
}
