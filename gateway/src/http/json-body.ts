import type { Context, Next } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { UnsupportedMediaTypeError, ValidationError, type Issue } from './errors';

const JSON_TYPES = ['application/json'];

/**
 * Parses a JSON request body (and nothing else) up to `limitBytes`. A body of another type is refused with 415
 * before it is read; a body without any content type or length is taken as absent and left to the schema.
 */
export function jsonBody(limitBytes: number) {
  const parse = koaBody({
    json: true,
    urlencoded: false,
    text: false,
    multipart: false,
    jsonStrict: true,
    jsonLimit: limitBytes,
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
  });
  return async (ctx: Context, next: Next): Promise<void> => {
    if (ctx.request.type !== '' && !ctx.is(JSON_TYPES)) {
      throw new UnsupportedMediaTypeError('request body must be application/json');
    }
    if (ctx.request.type === '' && ctx.request.length > 0) {
      throw new UnsupportedMediaTypeError('request body must be application/json');
    }
    await parse(ctx as never, async () => {
      refuseNul((ctx.request as { body?: unknown }).body, []);
      await next();
    });
  };
}

/**
 * Refuses a NUL character in any string (or key) of a body or query: PostgreSQL (under FerretDB) cannot store one in
 * a JSON value, so it would otherwise fail deep in the pipeline instead of here, as a clear 400.
 */
export function refuseNul(root: unknown, rootPath: Array<string | number>): void {
  const issues: Issue[] = [];
  const stack: Array<{ value: unknown; path: Array<string | number> }> = [{ value: root, path: rootPath }];
  while (stack.length > 0 && issues.length < 20) {
    const { value, path } = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\0')) issues.push({ path, message: 'must not contain a NUL character' });
    } else if (Array.isArray(value)) {
      value.forEach((item, index) => stack.push({ value: item, path: [...path, index] }));
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        if (key.includes('\0')) issues.push({ path, message: 'keys must not contain a NUL character' });
        stack.push({ value: item, path: [...path, key] });
      }
    }
  }
  if (issues.length > 0) throw new ValidationError('request has a NUL character', issues);
}
