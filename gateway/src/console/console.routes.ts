import Router from '@koa/router';
import type { Context, Next } from 'koa';
import { ForbiddenError, NotFoundError, ValidationError } from '../errors';
import { toHttpError } from '../http/error-handler';
import { refuseUnstorableValues } from '../http/json-body';
import { requestIdOf } from '../http/request-id';
import { refuseUndecodableUrl } from '../http/url-text';
import { appealPages } from './appeals.pages';
import { hashBankPages } from './hash-banks.pages';
import { hashQuarantinePages } from './hash-quarantine.pages';
import { policyPages } from './policies.pages';
import { backtestPages } from './backtests.pages';
import { reportPages } from './reports.pages';
import { serveAsset } from './assets';
import {
  CONSOLE_PREFIX,
  param,
  stateOf,
  viewerOf,
  type ConsoleDeps,
  type ConsolePages,
  type ConsoleSettings,
} from './page';
import { precisionPages } from './precision.pages';
import { transparencyReportPages } from './transparency-report.pages';
import { recordPages } from './records.pages';
import { formBody, formOf, sameOriginChanges, sameToken, securityHeaders } from './security';
import { loadSession, requireSession, signInRoutes, signOutRoutes } from './session.pages';
import { settingsPages } from './settings.pages';
import { userPages } from './users.pages';
import { errorPage } from './views';
import { webhookPages } from './webhooks.pages';

export { type ConsoleDeps, type ConsoleSettings } from './page';

/** The console: server-rendered pages for a tenant's members, calling the same moderator RPCs and stores as the API. */
export function consoleRoutes(deps: ConsoleDeps, settings: ConsoleSettings): Router {
  const router = new Router({ prefix: CONSOLE_PREFIX, sensitive: true, strict: false });
  const form = formBody(settings.bodyLimitBytes);
  const pages: ConsolePages = {
    router,
    deps,
    settings,
    form,
    change: [
      form,
      async (ctx: Context, next: Next) => {
        const token = formOf(ctx)._csrf ?? '';
        if (!sameToken(token, stateOf(ctx).session!.csrf)) {
          throw new ForbiddenError('missing or wrong CSRF token: reload the page and try again', { code: 'csrf' });
        }
        await next();
      },
    ],
    adminOnly: async (ctx: Context, next: Next) => {
      if (stateOf(ctx).session!.role !== 'admin') throw new ForbiddenError('admins only');
      await next();
    },
  };

  // Errors become HTML pages with the same status and stable code as the API's JSON envelope.
  router.use(securityHeaders);
  router.use(async (ctx: Context, next: Next) => {
    try {
      await next();
    } catch (raw) {
      const { err, status, headers } = toHttpError(raw);
      if (status >= 500 && !err.retriable) {
        deps.log.error({ err: err.cause ?? err, requestId: requestIdOf(ctx) }, 'console request failed');
      }
      ctx.status = status;
      if (headers) ctx.set(headers);
      ctx.type = 'text/html; charset=utf-8';
      const issues = err instanceof ValidationError ? err.issues : [];
      ctx.body = errorPage(viewerOf(ctx), status, err.code, err.message, issues);
    }
  });
  // The query and path as the API takes them: UTF-8 escapes only, no NUL, no lone surrogate (a 400 naming the field).
  router.use(async (ctx: Context, next: Next) => {
    refuseUndecodableUrl(ctx.querystring, [ctx.path], ['path']);
    refuseUnstorableValues(ctx.query, ['query']);
    refuseUnstorableValues(safeDecode(ctx.path), ['path']);
    await next();
  });
  router.use(sameOriginChanges(settings.publicUrl));
  router.use(loadSession(deps.members, deps.configVersions));

  router.get('/assets/:name', (ctx) => serveAsset(ctx, param(ctx, 'name')));
  signInRoutes(pages);

  // Everything below needs a session; a change also needs the session's CSRF token (and, as every change above too, a
  // same-origin request).
  router.use(requireSession);
  signOutRoutes(pages);
  router.get('/', (ctx) => ctx.redirect('/console/records'));
  recordPages(pages);
  userPages(pages);
  appealPages(pages);
  reportPages(pages);
  policyPages(pages);
  hashBankPages(pages);
  hashQuarantinePages(pages);
  settingsPages(pages);
  backtestPages(pages);
  precisionPages(pages);
  transparencyReportPages(pages);
  webhookPages(pages);
  // Any other console address (or a method a page does not take) is a console page too, not the API's JSON.
  router.all('/{*rest}', () => {
    throw new NotFoundError('there is no such console page');
  });

  return router;
}

/** The decoded path, or the path as it is when an escape does not decode (refused before as not UTF-8). */
function safeDecode(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
