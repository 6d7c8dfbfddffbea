import type { Context, Next } from 'koa';

/**
 * An answer given before the request's body was read (a refused key, a body over the limit, a wrong content type)
 * closes the connection. Node would otherwise read and discard the rest of the body, however large it was announced,
 * to keep the connection alive, and the client could not send its next request on it until the upload ended.
 */
export async function closeOnUnreadBody(ctx: Context, next: Next): Promise<void> {
  try {
    await next();
  } finally {
    if (!ctx.req.complete && hasBody(ctx)) ctx.set('Connection', 'close');
  }
}

function hasBody(ctx: Context): boolean {
  const length = ctx.get('content-length');
  return ctx.get('transfer-encoding') !== '' || (length !== '' && length !== '0');
}
