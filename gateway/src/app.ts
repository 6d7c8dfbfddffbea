import Koa from 'koa';
import type { Logger } from 'pino';

export interface AppDeps {
  log: Logger;
}

/** Builds the HTTP API. No I/O here: every client comes in through `deps`. */
export function createApp(deps: AppDeps): Koa {
  const app = new Koa();
  app.silent = true;
  app.on('error', (err: unknown) => deps.log.error({ err }, 'unhandled http error'));
  return app;
}
