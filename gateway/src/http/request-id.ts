import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';

/** A client's id is echoed only when it is short and printable: it ends up in logs and headers. */
const ACCEPTABLE = /^[\w.:-]{1,128}$/;

/** The id `requestId` gave this request (every route runs after it). */
export const requestIdOf = (ctx: Context): string => ctx.state.requestId as string;

export async function requestId(ctx: Context, next: Next): Promise<void> {
  const given = ctx.get('x-request-id');
  const id = ACCEPTABLE.test(given) ? given : randomUUID();
  ctx.state.requestId = id;
  ctx.set('X-Request-Id', id);
  await next();
}
