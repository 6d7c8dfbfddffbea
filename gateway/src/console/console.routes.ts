import Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import { z } from 'zod';
import { LIMITS, RecordStatus, UserStatus, AppealStatus } from '@vigil/proto';
import { ForbiddenError, InvalidJsonError, NotFoundError, UnauthorizedError, ValidationError } from '../http/errors';
import { toAppError } from '../http/error-handler';
import { rateLimit } from '../http/rate-limit';
import { parseWith } from '../http/validate';
import type { RouteDeps } from '../routes/deps';
import { toRecordView } from '../routes/records/records.routes';
import { RulesBody, SettingsPatchBody } from '../routes/rules/rules.schema';
import { toPaymentActionView, toUserView } from '../routes/users/users.routes';
import { toAppealView } from '../routes/appeals/appeals.routes';
import { replayEndpoint, retryDelivery } from '../routes/webhook-endpoints/webhook-commands';
import { parseMetadata } from '../routes/shared/paging.schema';
import type { MemberStore, SessionDoc } from '../store/member-store';
import { serveAsset } from './assets';
import { html, safeLink, type Html } from './html';
import { DUMMY_HASH, MAX_PASSWORD_LENGTH, verifyPassword } from './password';
import { checkSameOrigin, formBody, formOf, safeNext, sameToken, securityHeaders } from './security';
import { badge, csrfField, errorPage, layout, links, metadataTable, when, type Viewer } from './views';

export const CONSOLE_PREFIX = '/console';
const SESSION_COOKIE = 'vigil_console';
const PAGE_SIZE = 25;

export interface ConsoleSettings {
  sessionTtlSeconds: number;
  lockoutAttempts: number;
  lockoutSeconds: number;
  signInPerMinute: number;
  bodyLimitBytes: number;
}

export interface ConsoleDeps extends RouteDeps {
  members: MemberStore;
  log: Logger;
}

interface ConsoleState {
  session?: SessionDoc & { email: string };
}

const stateOf = (ctx: Context): ConsoleState => ctx.state;
const viewerOf = (ctx: Context): Viewer | null => {
  const session = stateOf(ctx).session;
  return session ? { email: session.email, role: session.role, csrf: session.csrf } : null;
};
const requestIdOf = (ctx: Context): string => ctx.state.requestId as string;
/** How a console decision names who made it: the member's id, never their email. */
const actorOf = (session: SessionDoc): string => `member:${session.memberId}`;
const param = (ctx: Context, name: string): string => String((ctx.params as Record<string, string>)[name] ?? '');

const Reason = z.string().trim().min(1).max(LIMITS.reason);
const optionalText = (max: number) =>
  z
    .string()
    .max(max)
    .optional()
    .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));
const optionalDate = z
  .string()
  .max(40)
  .optional()
  .transform((v) => (v === undefined || v === '' ? undefined : v))
  .refine((v) => v === undefined || Number.isFinite(Date.parse(v)), 'must be a date');

const InboxQuery = z.object({
  status: z.enum(['Flagged', 'Compliant', 'all']).default('Flagged'),
  entity: optionalText(LIMITS.entity),
  user: optionalText(LIMITS.queryId),
  from: optionalDate,
  to: optionalDate,
  after: optionalText(LIMITS.queryId),
  before: optionalText(LIMITS.queryId),
});
const UsersQuery = z.object({
  status: z.union([UserStatus, z.literal('all')]).default('all'),
  clientId: optionalText(LIMITS.clientId),
  email: optionalText(LIMITS.queryEmail),
  after: optionalText(LIMITS.queryId),
});
const AppealsQuery = z.object({
  status: AppealStatus.default('Open'),
  after: optionalText(LIMITS.queryId),
});
const CursorQuery = z.object({ after: optionalText(LIMITS.queryId) });
const SignInForm = z.object({
  email: z.string().trim().min(1).max(320),
  password: z.string().min(1).max(MAX_PASSWORD_LENGTH),
  next: z.string().max(2000).optional(),
});

const Content = z.object({
  text: z.string().default(''),
  imageUrls: z.array(z.string()).default([]),
  externalUrls: z.array(z.string()).default([]),
});
const contentOf = (value: unknown): z.infer<typeof Content> | null => Content.safeParse(value).data ?? null;

/** `YYYY-MM-DD` from a date input means the whole day: `to` is exclusive, so it moves to the next midnight. */
function dayBound(value: string | undefined, end: boolean): string | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  return new Date(/^\d{4}-\d{2}-\d{2}$/.test(value) && end ? ms + 86_400_000 : ms).toISOString();
}

function queryString(params: Record<string, string | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value) search.set(key, value);
  const text = search.toString();
  return text ? `?${text}` : '';
}

function eventSummary(type: string, data: Record<string, unknown>): Html {
  const parts: Html[] = [];
  if (typeof data.status === 'string') parts.push(html`${badge(data.status)} `);
  if (typeof data.via === 'string') parts.push(html`<span class="via">via ${data.via}</span> `);
  if (typeof data.actor === 'string') parts.push(html`<span class="actor">by ${data.actor}</span> `);
  if (typeof data.reason === 'string') parts.push(html`<q>${data.reason}</q> `);
  if (Array.isArray(data.reasons) && data.reasons.length > 0) {
    parts.push(html`<span>${(data.reasons as unknown[]).map(String).join('; ')}</span>`);
  }
  if (type === 'AppealCreated' && typeof data.text === 'string') parts.push(html`<q>${data.text}</q>`);
  return html`${parts}`;
}

function historyTable(events: Array<{ type: string; occurredAt: string; dataJson: string }>): Html {
  return html`<table class="history">
    <thead>
      <tr>
        <th>When</th>
        <th>Event</th>
        <th>Detail</th>
      </tr>
    </thead>
    <tbody>
      ${events.map(
        (event) =>
          html`<tr class="event ${event.type}">
            <td>${when(event.occurredAt)}</td>
            <td>${event.type}</td>
            <td>${eventSummary(event.type, parseMetadata(event.dataJson))}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

/** The console: server-rendered pages for a tenant's members, calling the same moderator RPCs and stores as the API. */
export function consoleRoutes(deps: ConsoleDeps, settings: ConsoleSettings): Router {
  const router = new Router({ prefix: CONSOLE_PREFIX, sensitive: true, strict: false });
  const form = formBody(settings.bodyLimitBytes);
  const signInLimit = rateLimit(deps.rateLimiter, {
    points: settings.signInPerMinute,
    windowSeconds: 60,
    keyOf: (ctx) => `console-sign-in:${ctx.ip}`,
    message: 'too many sign-in attempts from this address',
  });

  const render = (ctx: Context, title: string, body: Html, current = ''): void => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = layout(title, viewerOf(ctx), body, current);
  };

  // Errors become HTML pages with the same status and stable code as the API's JSON envelope.
  router.use(securityHeaders);
  router.use(async (ctx: Context, next: Next) => {
    try {
      await next();
    } catch (raw) {
      const err = toAppError(raw);
      if (err.status >= 500 && !err.retriable) {
        deps.log.error({ err: err.cause ?? err, requestId: requestIdOf(ctx) }, 'console request failed');
      }
      ctx.status = err.status;
      if (err.headers) ctx.set(err.headers);
      ctx.type = 'text/html; charset=utf-8';
      const issues = err instanceof ValidationError ? err.issues : [];
      ctx.body = errorPage(viewerOf(ctx), err.status, err.code, err.message, issues);
    }
  });
  // The session of the cookie, if any: by the SHA-256 of its token, through `_id`.
  router.use(async (ctx: Context, next: Next) => {
    const token = ctx.cookies.get(SESSION_COOKIE);
    if (token && token.length <= 100) {
      const session = await deps.members.findSession(token);
      if (session) {
        const member = await deps.members.members.findOne({ _id: session.memberId }, { projection: { email: 1 } });
        if (member) stateOf(ctx).session = { ...session, email: member.email };
      }
    }
    await next();
  });

  router.get('/assets/:name', (ctx) => serveAsset(ctx, param(ctx, 'name')));

  const signInPage = (ctx: Context, next: string, message?: string): void => {
    render(
      ctx,
      'Sign in',
      html`<form method="post" action="/console/sign-in" class="card sign-in">
        ${message ? html`<p class="error" role="alert">${message}</p>` : null}
        <input type="hidden" name="next" value="${next}" />
        <label
          >Email <input type="email" name="email" autocomplete="username" required maxlength="320" autofocus
        /></label>
        <label
          >Password
          <input
            type="password"
            name="password"
            autocomplete="current-password"
            required
            maxlength="${MAX_PASSWORD_LENGTH}"
        /></label>
        <button type="submit">Sign in</button>
      </form>`,
    );
  };

  router.get('/sign-in', (ctx) => {
    if (stateOf(ctx).session) {
      ctx.redirect(safeNext(ctx.query.next, CONSOLE_PREFIX, '/console/records'));
      return;
    }
    signInPage(ctx, safeNext(ctx.query.next, CONSOLE_PREFIX, '/console/records'));
  });

  // No session exists yet to tie a token to: the same-origin check and the SameSite=Strict cookie stop forged
  // sign-ins. Unknown emails cost a hash too, and every failure answers the same, so emails cannot be probed.
  router.post('/sign-in', signInLimit, form, async (ctx) => {
    checkSameOrigin(ctx);
    const input = parseWith(SignInForm, formOf(ctx), 'sign-in form');
    const next = safeNext(input.next, CONSOLE_PREFIX, '/console/records');
    const member = await deps.members.findByEmail(input.email);
    const locked = member?.lockedUntil !== undefined && member.lockedUntil.getTime() > Date.now();
    const ok = await verifyPassword(input.password, member && !locked ? member.passwordHash : DUMMY_HASH);
    if (!member || locked || !ok) {
      if (member && !locked) {
        await deps.members.recordFailure(member, settings.lockoutAttempts, settings.lockoutSeconds * 1000);
      }
      deps.log.info({ memberId: member?._id, locked, requestId: requestIdOf(ctx) }, 'console sign-in refused');
      ctx.status = 401;
      signInPage(ctx, next, 'Wrong email or password, or too many failed attempts: try again later.');
      return;
    }
    await deps.members.recordSuccess(member);
    if (stateOf(ctx).session) await deps.members.endSession(stateOf(ctx).session!._id);
    const { token, session } = await deps.members.createSession(member, settings.sessionTtlSeconds * 1000);
    ctx.cookies.set(SESSION_COOKIE, token, {
      httpOnly: true,
      sameSite: 'strict',
      secure: ctx.secure,
      path: CONSOLE_PREFIX,
      expires: session.expiresAt,
      overwrite: true,
    });
    deps.log.info({ memberId: member._id, requestId: requestIdOf(ctx) }, 'console sign-in');
    ctx.redirect(next);
  });

  // Everything below needs a session; a change also needs the session's CSRF token and a same-origin request.
  router.use(async (ctx: Context, next: Next) => {
    const session = stateOf(ctx).session;
    if (!session) {
      if (ctx.method === 'GET' || ctx.method === 'HEAD') {
        ctx.redirect(`/console/sign-in${queryString({ next: ctx.originalUrl })}`);
        return;
      }
      throw new UnauthorizedError('sign in first');
    }
    await next();
  });
  const change = [
    form,
    async (ctx: Context, next: Next) => {
      checkSameOrigin(ctx);
      const token = formOf(ctx)._csrf ?? '';
      if (!sameToken(token, stateOf(ctx).session!.csrf)) {
        throw new ForbiddenError('missing or wrong CSRF token: reload the page and try again', { code: 'csrf' });
      }
      await next();
    },
  ];
  const adminOnly = async (ctx: Context, next: Next) => {
    if (stateOf(ctx).session!.role !== 'admin') throw new ForbiddenError('admins only');
    await next();
  };
  const session = (ctx: Context): SessionDoc => stateOf(ctx).session!;
  const tenant = (ctx: Context): string => session(ctx).tenantId;
  const call = { requestId: (ctx: Context) => ({ requestId: requestIdOf(ctx) }) };

  router.post('/sign-out', ...change, async (ctx) => {
    await deps.members.endSession(session(ctx)._id);
    ctx.cookies.set(SESSION_COOKIE, '', { path: CONSOLE_PREFIX, httpOnly: true, sameSite: 'strict', maxAge: 0 });
    ctx.redirect('/console/sign-in');
  });

  router.get('/', (ctx) => ctx.redirect('/console/records'));

  // ---- Inbox ----
  router.get('/records', async (ctx) => {
    const q = parseWith(InboxQuery, ctx.query, 'query parameters');
    const result = await deps.moderator.call(
      'listRecords',
      {
        tenantId: tenant(ctx),
        limit: PAGE_SIZE,
        newestFirst: true,
        startingAfter: q.after,
        endingBefore: q.after ? undefined : q.before,
        entity: q.entity,
        status: q.status === 'all' ? undefined : q.status,
        userId: q.user,
        createdAfter: dayBound(q.from, false),
        createdBefore: dayBound(q.to, true),
      },
      call.requestId(ctx),
    );
    const records = result.records.map(toRecordView);
    const filters = { status: q.status, entity: q.entity, user: q.user, from: q.from, to: q.to };
    const back = ctx.originalUrl;
    const first = records[0];
    const last = records[records.length - 1];
    // Walking newest first: `after` pages to older records, `before` to newer ones. `has_more` speaks for the
    // direction walked; the other direction has more whenever a cursor was given.
    const older = q.before ? true : result.hasMore;
    const newer = q.before ? result.hasMore : q.after !== undefined;
    render(
      ctx,
      'Inbox',
      html`<form method="get" action="/console/records" class="filters">
          <label
            >Status
            <select name="status">
              ${['Flagged', 'Compliant', 'all'].map(
                (s) => html`<option value="${s}" ${q.status === s ? html`selected` : null}>${s}</option>`,
              )}
            </select></label
          >
          <label>Entity <input name="entity" value="${q.entity ?? ''}" maxlength="${LIMITS.entity}" /></label>
          <label>User id <input name="user" value="${q.user ?? ''}" maxlength="${LIMITS.queryId}" /></label>
          <label>From <input type="date" name="from" value="${q.from ?? ''}" /></label>
          <label>To <input type="date" name="to" value="${q.to ?? ''}" /></label>
          <button type="submit">Filter</button>
        </form>
        <p class="hint">
          Keys: <kbd>j</kbd>/<kbd>k</kbd> next/previous, <kbd>o</kbd> open, <kbd>a</kbd> approve as Compliant,
          <kbd>f</kbd> confirm Flagged.
        </p>
        ${
          records.length === 0
            ? html`<p class="empty">Nothing to review.</p>`
            : html`<table class="inbox" data-keyboard="rows">
                <thead>
                  <tr>
                    <th>Record</th>
                    <th>Status</th>
                    <th>Entity</th>
                    <th>Reasons</th>
                    <th>User</th>
                    <th>Created</th>
                    <th>Actions</th>
                  </tr>
                </thead>
                <tbody>
                  ${records.map(
                    (r) =>
                      html`<tr data-row data-id="${r.id}">
                        <td><a class="open" href="/console/records/${r.id}">${r.name ?? r.clientId}</a></td>
                        <td>${badge(r.moderationStatus)}</td>
                        <td>${r.entity}</td>
                        <td>${r.reasons.join('; ')}</td>
                        <td>
                          ${r.user ? html`<a href="/console/users/${r.user}">${r.user}</a>` : html`<span class="muted">–</span>`}
                        </td>
                        <td>${when(r.createdAt)}</td>
                        <td class="actions">
                          <form method="post" action="/console/records/${r.id}/moderation">
                            ${csrfField(viewerOf(ctx)!)}<input type="hidden" name="back" value="${back}" />
                            <input type="hidden" name="status" value="Compliant" /><input
                              type="hidden"
                              name="reason"
                              value="Approved in review"
                            />
                            <button type="submit" data-key="a">Approve</button>
                          </form>
                          <form method="post" action="/console/records/${r.id}/moderation">
                            ${csrfField(viewerOf(ctx)!)}<input type="hidden" name="back" value="${back}" />
                            <input type="hidden" name="status" value="Flagged" /><input
                              type="hidden"
                              name="reason"
                              value="Confirmed in review"
                            />
                            <button type="submit" data-key="f" class="secondary">Flag</button>
                          </form>
                        </td>
                      </tr>`,
                  )}
                </tbody>
              </table>`
        }
        <nav class="pager">
          ${newer && first ? html`<a rel="prev" href="/console/records${queryString({ ...filters, before: first.id })}">← Newer</a>` : null}
          ${older && last ? html`<a rel="next" href="/console/records${queryString({ ...filters, after: last.id })}">Older →</a>` : null}
        </nav>`,
      '/console/records',
    );
  });

  // ---- Record ----
  router.get('/records/:id', async (ctx) => {
    const id = param(ctx, 'id');
    const [record, history] = await Promise.all([
      deps.moderator.call('getRecord', { tenantId: tenant(ctx), recordId: id }, call.requestId(ctx)),
      deps.moderator.call('getRecordEvents', { tenantId: tenant(ctx), recordId: id }, call.requestId(ctx)),
    ]);
    const view = toRecordView(record);
    // The content is not part of the record projection the API returns: the latest upsert event holds it.
    const upserts = history.events.filter((e) => e.type === 'RecordUpserted').map((e) => parseMetadata(e.dataJson));
    const content = contentOf(upserts[upserts.length - 1]?.content);
    render(
      ctx,
      view.name ?? view.clientId,
      html`<section class="card">
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              ${badge(view.moderationStatus)} ${view.moderationStatusVia ? html`via ${view.moderationStatusVia}` : null}
            </dd>
            <dt>Entity</dt>
            <dd>${view.entity}</dd>
            <dt>Client id</dt>
            <dd><code>${view.clientId}</code></dd>
            <dt>Client URL</dt>
            <dd>${view.clientUrl ? safeLink(view.clientUrl) : html`<span class="muted">–</span>`}</dd>
            <dt>User</dt>
            <dd>
              ${view.user ? html`<a href="/console/users/${view.user}">${view.user}</a>` : html`<span class="muted">–</span>`}
            </dd>
            <dt>Protected</dt>
            <dd>${view.protected ? 'yes' : 'no'}</dd>
            <dt>Created</dt>
            <dd>${when(view.createdAt)}</dd>
            <dt>Updated</dt>
            <dd>${when(view.updatedAt)}</dd>
          </dl>
        </section>
        <section class="card">
          <h2>Content</h2>
          ${
            view.passthrough || !content
              ? html`<p class="muted">Not stored (passthrough).</p>`
              : html`<pre class="content">${content.text}</pre>
                  <h3>Images</h3>
                  ${links(content.imageUrls)}
                  <h3>Links</h3>
                  ${links(content.externalUrls)}`
          }
          <h3>Metadata</h3>
          ${metadataTable(view.metadata)}
        </section>
        <section class="card">
          <h2>Why</h2>
          ${
            view.reasons.length > 0
              ? html`<ul class="reasons">
                  ${view.reasons.map((r) => html`<li>${r}</li>`)}
                </ul>`
              : html`<p class="muted">No reasons.</p>`
          }
          <p>
            Rules:
            ${view.rules.length > 0 ? view.rules.map((r) => html`<code>${r}</code> `) : html`<span class="muted">none</span>`}
          </p>
        </section>
        <section class="card">
          <h2>Moderate by hand</h2>
          <form method="post" action="/console/records/${view.id}/moderation" class="decision">
            ${csrfField(viewerOf(ctx)!)}
            <label
              >Status
              <select name="status">
                <option value="Compliant">Compliant</option>
                <option value="Flagged">Flagged</option>
              </select></label
            >
            <label>Reason <textarea name="reason" required maxlength="${LIMITS.reason}" rows="2"></textarea></label>
            <button type="submit">Save decision</button>
          </form>
        </section>
        <section class="card">
          <h2>History</h2>
          ${historyTable(history.events)}
        </section>`,
    );
  });

  router.post('/records/:id/moderation', ...change, async (ctx) => {
    const input = parseWith(z.object({ status: RecordStatus, reason: Reason }), formOf(ctx), 'moderation form');
    const id = param(ctx, 'id');
    await deps.moderator.call(
      'moderateRecordManually',
      { tenantId: tenant(ctx), recordId: id, status: input.status, reason: input.reason, actor: actorOf(session(ctx)) },
      call.requestId(ctx),
    );
    ctx.redirect(safeNext(formOf(ctx).back, CONSOLE_PREFIX, `/console/records/${id}`));
  });

  // ---- Users ----
  router.get('/users', async (ctx) => {
    const q = parseWith(UsersQuery, ctx.query, 'query parameters');
    const result = await deps.moderator.call(
      'listUsers',
      {
        tenantId: tenant(ctx),
        limit: PAGE_SIZE,
        startingAfter: q.after,
        clientId: q.clientId,
        email: q.email,
        status: q.status === 'all' ? undefined : q.status,
      },
      call.requestId(ctx),
    );
    const users = result.users.map((u) => toUserView(u, null));
    const last = users[users.length - 1];
    render(
      ctx,
      'Users',
      html`<form method="get" action="/console/users" class="filters">
          <label
            >Status
            <select name="status">
              ${['all', 'Compliant', 'Suspended', 'Banned'].map(
                (s) => html`<option value="${s}" ${q.status === s ? html`selected` : null}>${s}</option>`,
              )}
            </select></label
          >
          <label>Client id <input name="clientId" value="${q.clientId ?? ''}" maxlength="${LIMITS.clientId}" /></label>
          <label>Email <input name="email" value="${q.email ?? ''}" maxlength="${LIMITS.queryEmail}" /></label>
          <button type="submit">Filter</button>
        </form>
        <table data-keyboard="rows">
          <thead>
            <tr>
              <th>User</th>
              <th>Status</th>
              <th>Flagged records</th>
              <th>Protected</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            ${users.map(
              (u) =>
                html`<tr data-row data-id="${u.id}">
                  <td><a class="open" href="/console/users/${u.id}">${u.username ?? u.clientId}</a></td>
                  <td>${badge(u.actionStatus)}</td>
                  <td>${u.flaggedRecordsCount}</td>
                  <td>${u.protected ? 'yes' : ''}</td>
                  <td>${when(u.createdAt)}</td>
                </tr>`,
            )}
          </tbody>
        </table>
        <nav class="pager">
          ${
            result.hasMore && last
              ? html`<a
                  rel="next"
                  href="/console/users${queryString({ status: q.status, clientId: q.clientId, email: q.email, after: last.id })}"
                  >Next →</a
                >`
              : null
          }
        </nav>`,
      '/console/users',
    );
  });

  router.get('/users/:id', async (ctx) => {
    const id = param(ctx, 'id');
    // The user first: another tenant's user is a plain 404, whichever of the other reads would have failed first.
    const user = await deps.moderator.call('getUser', { tenantId: tenant(ctx), userId: id }, call.requestId(ctx));
    const [history, records, appeals, payments] = await Promise.all([
      deps.moderator.call('getUserEvents', { tenantId: tenant(ctx), userId: id }, call.requestId(ctx)),
      deps.moderator.call(
        'listRecords',
        { tenantId: tenant(ctx), userId: id, limit: PAGE_SIZE, newestFirst: true },
        call.requestId(ctx),
      ),
      deps.moderator.call('listAppeals', { tenantId: tenant(ctx), userId: id, limit: 10 }, call.requestId(ctx)),
      deps.paymentLog.list(tenant(ctx), id, 10),
    ]);
    const view = toUserView(user, deps.appealLinks.urlFor(tenant(ctx), user));
    const statusEvents = history.events.filter((e) => e.type !== 'UserUpserted');
    render(
      ctx,
      view.username ?? view.name ?? view.clientId,
      html`<section class="card">
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              ${badge(view.actionStatus)} ${view.actionStatusVia ? html`via ${view.actionStatusVia}` : null}
              ${when(view.actionStatusCreatedAt)}
            </dd>
            <dt>Protected</dt>
            <dd>${view.protected ? html`<strong>yes</strong> (never actioned automatically or by hand)` : 'no'}</dd>
            <dt>Flagged records</dt>
            <dd>${view.flaggedRecordsCount}</dd>
            <dt>Client id</dt>
            <dd><code>${view.clientId}</code></dd>
            <dt>Client URL</dt>
            <dd>${view.clientUrl ? safeLink(view.clientUrl) : html`<span class="muted">–</span>`}</dd>
            <dt>Email</dt>
            <dd>${view.email ?? '–'}</dd>
            <dt>Name</dt>
            <dd>${view.name ?? '–'}</dd>
            <dt>Username</dt>
            <dd>${view.username ?? '–'}</dd>
            <dt>Appeal link</dt>
            <dd>
              ${view.appealUrl ? html`<a href="${view.appealUrl}" class="appeal-link">appeal page</a>` : html`<span class="muted">–</span>`}
            </dd>
            <dt>Created</dt>
            <dd>${when(view.createdAt)}</dd>
          </dl>
          <h3>Metadata</h3>
          ${metadataTable(view.metadata)}
        </section>
        <section class="card">
          <h2>Action</h2>
          <form method="post" action="/console/users/${view.id}/status" class="decision">
            ${csrfField(viewerOf(ctx)!)}
            <label
              >Status
              <select name="status">
                <option value="Suspended">Suspend</option>
                <option value="Banned">Ban</option>
                <option value="Compliant">Reinstate</option>
              </select></label
            >
            <label>Reason <textarea name="reason" required maxlength="${LIMITS.reason}" rows="2"></textarea></label>
            <button type="submit">Apply</button>
          </form>
        </section>
        <section class="card">
          <h2>Status history</h2>
          ${historyTable(statusEvents)}
        </section>
        <section class="card">
          <h2>Appeals</h2>
          ${
            appeals.appeals.length === 0
              ? html`<p class="muted">None.</p>`
              : html`<ul>
                  ${appeals.appeals.map(toAppealView).map((a) => html`<li>${badge(a.status)} ${when(a.createdAt)} <q>${a.text}</q></li>`)}
                </ul>`
          }
        </section>
        ${
          payments.docs.length === 0
            ? null
            : html`<section class="card">
                <h2>Payments</h2>
                <table class="payments">
                  <thead>
                    <tr>
                      <th>Action</th>
                      <th>Outcome</th>
                      <th>Account</th>
                      <th>Attempts</th>
                      <th>Stripe request</th>
                      <th>When</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${payments.docs.map(toPaymentActionView).map(
                      (p) =>
                        html`<tr>
                          <td>${p.action === 'pause' ? 'Pause charges' : 'Resume charges and payouts'}</td>
                          <td>
                            ${badge(p.status)}
                            ${p.skipReason ?? (p.status === 'failed' || p.status === 'pending' ? p.lastError : null)}
                          </td>
                          <td>
                            ${p.accountId ? html`<code>${p.accountId}</code>` : html`<span class="muted">–</span>`}
                          </td>
                          <td>${p.attemptCount}</td>
                          <td>
                            ${p.stripeRequestId ? html`<code>${p.stripeRequestId}</code>` : html`<span class="muted">–</span>`}
                          </td>
                          <td>${when(p.completedAt ?? p.createdAt)}</td>
                        </tr>`,
                    )}
                  </tbody>
                </table>
              </section>`
        }
        <section class="card">
          <h2>Records</h2>
          <table>
            <tbody>
              ${records.records.map(toRecordView).map(
                (r) =>
                  html`<tr>
                    <td><a href="/console/records/${r.id}">${r.name ?? r.clientId}</a></td>
                    <td>${badge(r.moderationStatus)}</td>
                    <td>${r.reasons.join('; ')}</td>
                    <td>${when(r.createdAt)}</td>
                  </tr>`,
              )}
            </tbody>
          </table>
          ${records.hasMore ? html`<p><a href="/console/records?status=all&user=${view.id}">All records of this user →</a></p>` : null}
        </section>`,
    );
  });

  router.post('/users/:id/status', ...change, async (ctx) => {
    const input = parseWith(z.object({ status: UserStatus, reason: Reason }), formOf(ctx), 'status form');
    const id = param(ctx, 'id');
    await deps.moderator.call(
      'setUserStatus',
      { tenantId: tenant(ctx), userId: id, status: input.status, reason: input.reason, actor: actorOf(session(ctx)) },
      call.requestId(ctx),
    );
    ctx.redirect(`/console/users/${id}`);
  });

  // ---- Appeals ----
  router.get('/appeals', async (ctx) => {
    const q = parseWith(AppealsQuery, ctx.query, 'query parameters');
    const result = await deps.moderator.call(
      'listAppeals',
      { tenantId: tenant(ctx), limit: 20, startingAfter: q.after, status: q.status },
      call.requestId(ctx),
    );
    const appeals = result.appeals.map(toAppealView);
    const details = await Promise.all(
      appeals.map(async (appeal) => {
        const [user, flagged] = await Promise.all([
          deps.moderator.call('getUser', { tenantId: tenant(ctx), userId: appeal.user }, call.requestId(ctx)),
          deps.moderator.call(
            'listRecords',
            { tenantId: tenant(ctx), userId: appeal.user, status: 'Flagged', limit: 5, newestFirst: true },
            call.requestId(ctx),
          ),
        ]);
        return { user: toUserView(user, null), records: flagged.records.map(toRecordView) };
      }),
    );
    const last = appeals[appeals.length - 1];
    render(
      ctx,
      'Appeals',
      html`<nav class="tabs">
          ${['Open', 'Approved', 'Rejected'].map(
            (s) => html`<a href="/console/appeals?status=${s}" class="${q.status === s ? 'current' : ''}">${s}</a>`,
          )}
        </nav>
        ${appeals.length === 0 ? html`<p class="empty">No ${q.status.toLowerCase()} appeals.</p>` : null}
        ${appeals.map((appeal, index) => {
          const detail = details[index]!;
          return html`<article class="card appeal" data-row data-id="${appeal.id}">
            <header>
              ${badge(appeal.status)}
              <a class="open" href="/console/users/${appeal.user}">${detail.user.username ?? detail.user.clientId}</a>
              (${badge(detail.user.actionStatus)}) · ${when(appeal.createdAt)}
            </header>
            <blockquote class="appeal-text">${appeal.text}</blockquote>
            <h3>Flagged records</h3>
            ${
              detail.records.length === 0
                ? html`<p class="muted">None.</p>`
                : html`<ul>
                    ${detail.records.map((r) => html`<li><a href="/console/records/${r.id}">${r.name ?? r.clientId}</a> ${r.reasons.join('; ')}</li>`)}
                  </ul>`
            }
            ${appeal.decisionReason ? html`<p>Decision: <q>${appeal.decisionReason}</q></p>` : null}
            ${
              appeal.status === 'Open'
                ? html`<form method="post" action="/console/appeals/${appeal.id}/decision" class="decision">
                    ${csrfField(viewerOf(ctx)!)}
                    <label
                      >Reason <textarea name="reason" required maxlength="${LIMITS.reason}" rows="2"></textarea>
                    </label>
                    <button type="submit" name="decision" value="Approved">Approve (reinstate)</button>
                    <button type="submit" name="decision" value="Rejected" class="secondary">Reject</button>
                  </form>`
                : null
            }
          </article>`;
        })}
        <nav class="pager">
          ${result.hasMore && last ? html`<a rel="next" href="/console/appeals${queryString({ status: q.status, after: last.id })}">Next →</a>` : null}
        </nav>`,
      '/console/appeals',
    );
  });

  router.post('/appeals/:id/decision', ...change, async (ctx) => {
    const input = parseWith(
      z.object({ decision: z.enum(['Approved', 'Rejected']), reason: Reason }),
      formOf(ctx),
      'decision form',
    );
    await deps.moderator.call(
      'decideAppeal',
      {
        tenantId: tenant(ctx),
        appealId: param(ctx, 'id'),
        decision: input.decision,
        reason: input.reason,
        actor: actorOf(session(ctx)),
      },
      call.requestId(ctx),
    );
    ctx.redirect('/console/appeals');
  });

  // ---- Rules and settings (admins) ----
  router.get('/settings', adminOnly, async (ctx) => {
    const [rules, current] = await Promise.all([
      deps.configStore.getRules(tenant(ctx)),
      deps.configStore.getSettings(tenant(ctx)),
    ]);
    render(
      ctx,
      'Rules & settings',
      html`<section class="card">
          <h2>Settings</h2>
          <form method="post" action="/console/settings" class="decision">
            ${csrfField(viewerOf(ctx)!)}
            <label class="check"
              ><input type="checkbox" name="testMode" value="true" ${current.testMode ? html`checked` : null} /> Test
              mode (results stored, no webhooks, no suspensions)</label
            >
            <label
              >Suspension threshold (flagged records)
              <input type="number" name="suspensionThreshold" min="1" value="${current.suspensionThreshold}"
            /></label>
            <button type="submit">Save settings</button>
          </form>
        </section>
        <section class="card">
          <h2>Rule set</h2>
          <p class="hint">The same JSON as <code>PUT /api/v1/rules</code>, checked the same way.</p>
          <form method="post" action="/console/rules">
            ${csrfField(viewerOf(ctx)!)}
            <textarea name="rules" rows="24" class="code" spellcheck="false">
${JSON.stringify(rules, null, 2)}</textarea>
            <button type="submit">Save rules</button>
          </form>
        </section>`,
      '/console/settings',
    );
  });

  router.post('/settings', adminOnly, ...change, async (ctx) => {
    const f = formOf(ctx);
    const patch = parseWith(
      SettingsPatchBody,
      {
        testMode: f.testMode === 'true',
        ...(f.suspensionThreshold !== undefined && f.suspensionThreshold !== ''
          ? { suspensionThreshold: Number(f.suspensionThreshold) }
          : {}),
      },
      'settings form',
    );
    await deps.configStore.patchSettings(tenant(ctx), patch);
    ctx.redirect('/console/settings');
  });

  router.post('/rules', adminOnly, ...change, async (ctx) => {
    let json: unknown;
    try {
      json = JSON.parse(formOf(ctx).rules ?? '');
    } catch {
      throw new InvalidJsonError('the rule set is not valid JSON');
    }
    await deps.configStore.putRules(tenant(ctx), parseWith(RulesBody, json, 'rule set'));
    ctx.redirect('/console/settings');
  });

  // ---- Webhooks (admins) ----
  router.get('/webhooks', adminOnly, async (ctx) => {
    const { docs } = await deps.webhooks.list(tenant(ctx), 100);
    const states = await Promise.all(docs.map((doc) => deps.webhooks.state(doc._id)));
    render(
      ctx,
      'Webhooks',
      html`<p class="hint">Endpoints are registered through <code>POST /api/v1/webhook-endpoints</code>.</p>
        <table>
          <thead>
            <tr>
              <th>URL</th>
              <th>Events</th>
              <th>State</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            ${docs.map((doc, i) => {
              const state = states[i];
              return html`<tr>
                <td><a href="/console/webhooks/${doc._id}">${doc.url}</a></td>
                <td>${doc.events.length > 0 ? doc.events.join(', ') : 'all'}</td>
                <td>
                  ${!doc.enabled || state?.disabledAt ? html`<span class="badge Flagged">disabled</span> ${state?.disabledReason ?? ''}` : state?.failingSince ? html`<span class="badge Suspended">failing</span>` : html`<span class="badge Compliant">enabled</span>`}
                </td>
                <td>${when(doc.createdAt.toISOString())}</td>
              </tr>`;
            })}
          </tbody>
        </table>`,
      '/console/webhooks',
    );
  });

  router.get('/webhooks/:id', adminOnly, async (ctx) => {
    const q = parseWith(CursorQuery, ctx.query, 'query parameters');
    const doc = await deps.webhooks.get(tenant(ctx), param(ctx, 'id'));
    if (!doc) throw new NotFoundError('webhook endpoint not found');
    const page = await deps.webhooks.listDeliveries(doc.tenantId, doc._id, PAGE_SIZE, q.after);
    if (!page)
      throw new ValidationError('invalid cursor', [{ path: ['after'], message: 'not a delivery of this endpoint' }]);
    const last = page.docs[page.docs.length - 1];
    render(
      ctx,
      doc.url,
      html`<section class="card">
          <form method="post" action="/console/webhooks/${doc._id}/replay" class="decision">
            ${csrfField(viewerOf(ctx)!)}
            <label>Replay deliveries since <input type="datetime-local" name="since" required /></label>
            <button type="submit">Replay</button>
          </form>
        </section>
        <table class="deliveries">
          <thead>
            <tr>
              <th>Created</th>
              <th>Event</th>
              <th>State</th>
              <th>Attempts</th>
              <th>Last status</th>
              <th>Last duration</th>
              <th></th>
            </tr>
          </thead>
          <tbody>
            ${page.docs.map((d) => {
              const attempts = (d.attempts as Array<{ durationMs?: number }> | undefined) ?? [];
              const lastAttempt = attempts[attempts.length - 1];
              return html`<tr class="delivery" data-state="${String(d.state)}">
                <td>${when(d.createdAt instanceof Date ? d.createdAt.toISOString() : null)}</td>
                <td>${String(d.event)}</td>
                <td>${String(d.state)}</td>
                <td>${Number(d.attemptCount ?? 0)}</td>
                <td>
                  ${typeof d.lastStatusCode === 'number' ? d.lastStatusCode : typeof d.lastError === 'string' ? d.lastError : '–'}
                </td>
                <td>${lastAttempt?.durationMs !== undefined ? `${lastAttempt.durationMs} ms` : '–'}</td>
                <td>
                  <form method="post" action="/console/deliveries/${d._id}/retry">
                    ${csrfField(viewerOf(ctx)!)} <input type="hidden" name="back" value="${ctx.originalUrl}" /><button
                      type="submit"
                      class="secondary"
                    >
                      Retry
                    </button>
                  </form>
                </td>
              </tr>`;
            })}
          </tbody>
        </table>
        <nav class="pager">
          ${page.hasMore && last ? html`<a rel="next" href="/console/webhooks/${doc._id}?after=${last._id}">Older →</a>` : null}
        </nav>`,
      '/console/webhooks',
    );
  });

  router.post('/deliveries/:id/retry', adminOnly, ...change, async (ctx) => {
    await retryDelivery(deps, tenant(ctx), param(ctx, 'id'));
    ctx.redirect(safeNext(formOf(ctx).back, CONSOLE_PREFIX, '/console/webhooks'));
  });

  router.post('/webhooks/:id/replay', adminOnly, ...change, async (ctx) => {
    const since = parseWith(z.object({ since: optionalDate }), formOf(ctx), 'replay form').since;
    if (since === undefined)
      throw new ValidationError('invalid replay form', [{ path: ['since'], message: 'required' }]);
    await replayEndpoint(deps, tenant(ctx), param(ctx, 'id'), new Date(since));
    ctx.redirect(`/console/webhooks/${param(ctx, 'id')}`);
  });

  return router;
}
