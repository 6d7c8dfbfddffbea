import type { Context, Next } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { UnsupportedMediaTypeError } from './errors';

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
    await parse(ctx as never, next);
  };
}
