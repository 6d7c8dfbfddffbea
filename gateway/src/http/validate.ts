import type { Context } from 'koa';
import type { z } from 'zod';
import { ValidationError, type Issue } from './errors';

/** Every zod issue, flattened, each with the path into the request (unions report their branches' issues). */
export function issuesOf(error: z.ZodError): Issue[] {
  return error.issues.map((issue) => ({
    path: issue.path.map((segment) => (typeof segment === 'symbol' ? String(segment) : segment)),
    message: issue.message,
    code: issue.code,
  }));
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
