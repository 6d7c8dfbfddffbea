import Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import { z } from 'zod';
import { LIMITS } from '@vigil/proto';
import { ForbiddenError, ValidationError } from '../errors';
import { toHttpError } from '../http/error-handler';
import { rateLimit } from '../http/rate-limit';
import { requestIdOf } from '../http/request-id';
import { parseWith } from '../http/validate';
import type { UseCaseDeps } from '../use-cases/deps';
import { fileAppeal } from '../use-cases/file-appeal';
import { fileComplaint } from '../use-cases/file-complaint';
import { parseMetadata } from '../routes/shared/paging.schema';
import { html, type Html } from '../console/html';
import { formBody, formOf, sameOriginChanges, securityHeaders } from '../console/security';
import { errorNotice } from '../console/views';
import type { AppealClaims, AppealTokens } from './appeal-token';
import { standingStatement, statementSection } from './statement-section';

/** Whom a complaint link names: the tenant and the report complained about. */
interface ComplaintClaims {
  tenantId: string;
  reportId: string;
}

export interface AppealPageSettings {
  perMinute: number;
  bodyLimitBytes: number;
  /** `PUBLIC_URL`: its origin is accepted as the `Origin` of the appeal form (besides the request's own). */
  publicUrl?: string;
}

function page(title: string, body: Html): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <title>${title}</title>
        <link rel="stylesheet" href="/console/assets/console.css" />
      </head>
      <body>
        <main class="public">
          <h1>${title}</h1>
          ${body}
        </main>
      </body>
    </html>`.value;
}

const AppealForm = z.object({
  token: z.string().min(1).max(512),
  text: z.string().trim().min(1).max(LIMITS.appealText),
  confirm: z.literal('yes', { error: 'confirm that you read the reasons' }),
});

const ComplaintForm = z.object({
  token: z.string().min(1).max(512),
  text: z.string().trim().min(1).max(LIMITS.complaintText),
});

/**
 * The public appeal page a suspended or banned user reaches from their `appealUrl`. The signed token is the only
 * credential: it names the tenant and the user, so the page reads and acts on nothing else. Rate-limited per client
 * address; the token also stands in for a CSRF token (a forged form cannot know it).
 */
export function appealPageRoutes(
  deps: UseCaseDeps & { log: Logger },
  tokens: AppealTokens | undefined,
  complaintTokens: AppealTokens | undefined,
  settings: AppealPageSettings,
): Router {
  const router = new Router({ sensitive: true, strict: true });
  const limit = rateLimit(deps.rateLimiter, {
    points: settings.perMinute,
    windowSeconds: 60,
    keyOf: (ctx) => `appeal:${ctx.ip}`,
    message: 'too many requests to the appeal page from this address',
  });

  const guard = async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
    } catch (raw) {
      const { err, status, headers } = toHttpError(raw);
      if (status >= 500 && !err.retriable) deps.log.error({ err: err.cause ?? err }, 'appeal page failed');
      ctx.status = status;
      if (headers) ctx.set(headers);
      ctx.type = 'text/html; charset=utf-8';
      const issues = err instanceof ValidationError ? err.issues : [];
      ctx.body = page(ctx.path === '/complaint' ? 'Complaint' : 'Appeal', errorNotice(err.code, err.message, issues));
    }
  };

  const claimsOf = (token: unknown): AppealClaims => {
    if (!tokens) throw new ForbiddenError('appeals are not enabled', { code: 'appeals_disabled' });
    const claims = typeof token === 'string' ? tokens.verify(token) : 'malformed';
    if (claims === 'expired') throw new ForbiddenError('this appeal link has expired', { code: 'token_expired' });
    if (typeof claims === 'string')
      throw new ForbiddenError('this appeal link is not valid', { code: 'token_invalid' });
    return claims;
  };

  /** The page for the token's user; `draft`: an appeal refused as written, shown again with what was wrong. */
  const show = async (
    ctx: Context,
    token: string,
    claims: AppealClaims,
    notice?: string,
    draft?: { text: string; error: ValidationError },
  ): Promise<void> => {
    const meta = { requestId: requestIdOf(ctx) };
    const [user, history, flagged, appeals, tenantSettings] = await Promise.all([
      deps.moderator.call('getUser', { tenantId: claims.tenantId, userId: claims.userId }, meta),
      deps.moderator.call('getUserEvents', { tenantId: claims.tenantId, userId: claims.userId }, meta),
      deps.moderator.call(
        'listRecords',
        { tenantId: claims.tenantId, userId: claims.userId, status: 'Flagged', limit: 20, newestFirst: true },
        meta,
      ),
      deps.moderator.call('listAppeals', { tenantId: claims.tenantId, userId: claims.userId, limit: 100 }, meta),
      deps.configStore.cachedSettings(claims.tenantId),
    ]);
    const statement = standingStatement(history.events, claims.tenantId, {
      appealWindowDays: tenantSettings.appealWindowDays,
      appealUrl: null,
    });
    const statusChanges = history.events.filter((event) => event.type === 'UserStatusChanged');
    const latest = statusChanges[statusChanges.length - 1];
    const reason = latest ? (parseMetadata(latest.dataJson).reason as string | undefined) : undefined;
    const since = user.statusUpdatedAt ?? '';
    const appealed = appeals.appeals.find((appeal) => appeal.createdAt >= since);
    const actioned = user.status === 'Suspended' || user.status === 'Banned';
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = page(
      'Appeal',
      html`${notice ? html`<p class="card notice" role="status">${notice}</p>` : null}
        <section class="card">
          <p>
            Account status:
            <span class="badge ${user.status ?? 'none'}" id="status">${user.status ?? 'Compliant'}</span>
          </p>
          ${reason && !(actioned && statement) ? html`<p>Reason given: <q>${reason}</q></p>` : null}
          ${
            flagged.records.length > 0
              ? html`<h2>Your flagged content</h2>
                  <ul class="reasons">
                    ${flagged.records.map(
                      (r) =>
                        html`<li><strong>${r.name ?? r.entity}</strong>: ${r.reasons.join('; ') || 'flagged'}</li>`,
                    )}
                  </ul>`
              : null
          }
        </section>
        ${actioned && statement ? statementSection(statement) : null}
        ${
          !actioned
            ? html`<p class="card" id="state">Your account is in good standing: there is nothing to appeal.</p>`
            : appealed
              ? html`<p class="card" id="state">
                  Your appeal was received (${appealed.status}). You can appeal only once per decision.
                </p>`
              : html`<form method="post" action="/appeal" class="card decision">
                  ${draft ? errorNotice(draft.error.code, draft.error.message, draft.error.issues) : null}
                  <input type="hidden" name="token" value="${token}" />
                  <label
                    >Why should this decision be reconsidered?
                    <textarea name="text" required maxlength="${LIMITS.appealText}" rows="6">
${draft?.text ?? ''}</textarea>
                  </label>
                  <label class="check"
                    ><input type="checkbox" name="confirm" value="yes" required /> I have read the reasons above and
                    fixed or removed the content concerned.</label
                  >
                  <button type="submit">Send appeal</button>
                </form>`
        }`,
    );
  };

  /** A complaint link's claims: its token is an appeal token whose subject is the report, not a user. */
  const complaintClaimsOf = (token: unknown): ComplaintClaims => {
    if (!complaintTokens) throw new ForbiddenError('complaints are not enabled', { code: 'appeals_disabled' });
    const claims = typeof token === 'string' ? complaintTokens.verify(token) : 'malformed';
    if (claims === 'expired') throw new ForbiddenError('this complaint link has expired', { code: 'token_expired' });
    if (typeof claims === 'string')
      throw new ForbiddenError('this complaint link is not valid', { code: 'token_invalid' });
    return { tenantId: claims.tenantId, reportId: claims.userId };
  };

  /**
   * The page a reporter reaches from the outcome email of a decision not to act: the decision, and a form to complain
   * about it (Art. 20 DSA) while the window is open; later, the complaint and its outcome. The token's subject is the
   * report: the page shows nothing of the reported content, nor of anyone's data.
   */
  const showComplaint = async (
    ctx: Context,
    token: string,
    claims: ComplaintClaims,
    notice?: string,
    draft?: { text: string; error: ValidationError },
  ): Promise<void> => {
    const meta = { requestId: requestIdOf(ctx) };
    const [report, tenantSettings] = await Promise.all([
      deps.moderator.call('getReport', { tenantId: claims.tenantId, reportId: claims.reportId }, meta),
      deps.configStore.cachedSettings(claims.tenantId),
    ]);
    const { decision, complaint } = report;
    const openUntil = decision
      ? new Date(new Date(decision.decidedAt).getTime() + tenantSettings.appealWindowDays * 86_400_000)
      : null;
    const open = decision?.outcome === 'NoAction' && !complaint && openUntil !== null && openUntil > new Date();
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = page(
      'Complaint',
      html`${notice ? html`<p class="card notice" role="status">${notice}</p>` : null}
        <section class="card" id="decision">
          <p>Report <code>${report.id}</code> (<code>${report.category}</code>)</p>
          ${
            decision
              ? html`<p>
                    Decision:
                    <span class="badge ${decision.outcome}" id="outcome"
                      >${decision.outcome === 'NoAction' ? 'No action' : 'Acted on'}</span
                    >
                    on ${decision.decidedAt.slice(0, 10)}
                  </p>
                  <p>Reason given: <q>${decision.reason}</q></p>`
              : html`<p>Your report is still being reviewed.</p>`
          }
        </section>
        ${
          complaint
            ? html`<section class="card" id="complaint">
                <p>
                  Your complaint:
                  <span class="badge ${complaint.status}" id="complaint-status">${complaint.status}</span>
                </p>
                ${complaint.reason ? html`<p>Reason given: <q>${complaint.reason}</q></p>` : null}
              </section>`
            : open
              ? html`<form method="post" action="/complaint" class="card decision" id="complaint-form">
                  ${draft ? errorNotice(draft.error.code, draft.error.message, draft.error.issues) : null}
                  <p id="window">
                    You can complain about this decision until ${openUntil.toISOString().slice(0, 10)}
                    (${tenantSettings.appealWindowDays} days after it).
                  </p>
                  <input type="hidden" name="token" value="${token}" />
                  <label
                    >Why should this decision be reconsidered?
                    <textarea name="text" required maxlength="${LIMITS.complaintText}" rows="6">
${draft?.text ?? ''}</textarea>
                  </label>
                  <button type="submit">Send complaint</button>
                </form>`
              : html`<p class="card" id="state">There is nothing to complain about here.</p>`
        }`,
    );
  };

  router.use(securityHeaders);
  router.use(guard);
  router.use(sameOriginChanges(settings.publicUrl));
  router.get('/appeal', limit, async (ctx) => {
    const token = typeof ctx.query.token === 'string' ? ctx.query.token : '';
    const notice = ctx.query.sent === '1' ? 'Thank you: your appeal was sent to the moderators.' : undefined;
    await show(ctx, token, claimsOf(token), notice);
  });
  router.post('/appeal', limit, formBody(settings.bodyLimitBytes), async (ctx) => {
    const form = formOf(ctx);
    const claims = claimsOf(form.token);
    let input: z.infer<typeof AppealForm>;
    try {
      input = parseWith(AppealForm, form, 'appeal form');
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      // The form again, with the user's text and what was wrong, rather than a page without it.
      ctx.status = 400;
      await show(ctx, form.token ?? '', claims, undefined, { text: form.text ?? '', error: err });
      return;
    }
    await fileAppeal(deps, { tenantId: claims.tenantId, requestId: requestIdOf(ctx) }, claims.userId, input.text);
    deps.log.info({ userId: claims.userId, requestId: requestIdOf(ctx) }, 'appeal submitted');
    // Post, redirect, get: the page the user lands on keeps its link (a reload shows it again, and sends nothing).
    ctx.status = 303;
    ctx.redirect(`/appeal?token=${encodeURIComponent(input.token)}&sent=1`);
  });
  router.get('/complaint', limit, async (ctx) => {
    const token = typeof ctx.query.token === 'string' ? ctx.query.token : '';
    const notice = ctx.query.sent === '1' ? 'Thank you: your complaint was sent to the moderators.' : undefined;
    await showComplaint(ctx, token, complaintClaimsOf(token), notice);
  });
  router.post('/complaint', limit, formBody(settings.bodyLimitBytes), async (ctx) => {
    const form = formOf(ctx);
    const claims = complaintClaimsOf(form.token);
    let input: z.infer<typeof ComplaintForm>;
    try {
      input = parseWith(ComplaintForm, form, 'complaint form');
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      ctx.status = 400;
      await showComplaint(ctx, form.token ?? '', claims, undefined, { text: form.text ?? '', error: err });
      return;
    }
    await fileComplaint(deps, { tenantId: claims.tenantId, requestId: requestIdOf(ctx) }, claims.reportId, input.text);
    deps.log.info({ reportId: claims.reportId, requestId: requestIdOf(ctx) }, 'complaint submitted');
    ctx.status = 303;
    ctx.redirect(`/complaint?token=${encodeURIComponent(input.token)}&sent=1`);
  });
  return router;
}
