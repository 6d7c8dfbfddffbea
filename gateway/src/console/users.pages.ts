import { z } from 'zod';
import { isHumanVia, LIMITS, UserStatus } from '@vigil/proto';
import { parseWith } from '../http/validate';
import { toAppealView, toPaymentActionView, toRecordView, toUserView } from '../routes/shared/presenters';
import { decide } from '../use-cases/decide';
import { html, safeLink } from './html';
import {
  callMeta,
  csrfOf,
  optionalText,
  PAGE_SIZE,
  param,
  queryString,
  Reason,
  render,
  tenantOf,
  type ConsolePages,
  deciderOf,
} from './page';
import { formOf } from './security';
import { dataTable, badge, historyTable, metadataTable, when } from './views';

const UsersQuery = z.object({
  status: z.union([UserStatus, z.literal('all')]).default('all'),
  clientId: optionalText(LIMITS.clientId),
  email: optionalText(LIMITS.queryEmail),
  after: optionalText(LIMITS.queryId),
});

/** The user list, a user's page and their status by hand. */
export function userPages({ router, deps, change }: ConsolePages): void {
  router.get('/users', async (ctx) => {
    const q = parseWith(UsersQuery, ctx.query, 'query parameters');
    const result = await deps.moderator.call(
      'listUsers',
      {
        tenantId: tenantOf(ctx),
        limit: PAGE_SIZE,
        startingAfter: q.after,
        clientId: q.clientId,
        email: q.email,
        status: q.status === 'all' ? undefined : q.status,
      },
      callMeta(ctx),
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
        ${dataTable(
          ['User', 'Status', 'Flagged records', 'Protected', 'Created'],
          users.map(
            (u) =>
              html`<tr data-row data-id="${u.id}">
                <td><a class="open" href="/console/users/${u.id}">${u.username ?? u.clientId}</a></td>
                <td>${badge(u.actionStatus)}</td>
                <td>${u.flaggedRecordsCount}</td>
                <td>${u.protected ? 'yes' : ''}</td>
                <td>${when(u.createdAt)}</td>
              </tr>`,
          ),
          { keyboardRows: true },
        )}
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
    const user = await deps.moderator.call('getUser', { tenantId: tenantOf(ctx), userId: id }, callMeta(ctx));
    const [history, records, appeals, payments] = await Promise.all([
      deps.moderator.call('getUserEvents', { tenantId: tenantOf(ctx), userId: id }, callMeta(ctx)),
      deps.moderator.call(
        'listRecords',
        { tenantId: tenantOf(ctx), userId: id, limit: PAGE_SIZE, newestFirst: true },
        callMeta(ctx),
      ),
      deps.moderator.call('listAppeals', { tenantId: tenantOf(ctx), userId: id, limit: 10 }, callMeta(ctx)),
      deps.paymentLog.list(tenantOf(ctx), id, 10),
    ]);
    const view = toUserView(user, deps.appealLinks.urlFor(tenantOf(ctx), user));
    const statusEvents = history.events.filter((e) => e.type !== 'UserUpserted');
    // After a status form that asked for the status the user already had (see below).
    const unchanged = ctx.query.unchanged === '1';
    render(
      ctx,
      view.username ?? view.name ?? view.clientId,
      html`${
          unchanged
            ? html`<p class="card notice" role="status">
                The user was already ${view.actionStatus ?? 'Compliant'}: nothing was changed or recorded.
              </p>`
            : null
        }
        <section class="card">
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
            <dt>Open reports</dt>
            <dd>
              ${
                view.openReportsCount > 0
                  ? html`<a href="/console/reports">${view.openReportsCount}</a>`
                  : html`<span class="muted">0</span>`
              }
            </dd>
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
            ${csrfOf(ctx)}
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
                ${dataTable(
                  ['Action', 'Outcome', 'Account', 'Attempts', 'Stripe request', 'When'],
                  payments.docs.map(toPaymentActionView).map(
                    (p) =>
                      html`<tr>
                        <td>${p.action === 'pause' ? 'Pause charges' : 'Resume charges and payouts'}</td>
                        <td>
                          ${badge(p.status)}
                          ${p.skipReason ?? (p.status === 'failed' || p.status === 'pending' ? p.lastError : null)}
                        </td>
                        <td>${p.accountId ? html`<code>${p.accountId}</code>` : html`<span class="muted">–</span>`}</td>
                        <td>${p.attemptCount}</td>
                        <td>
                          ${p.stripeRequestId ? html`<code>${p.stripeRequestId}</code>` : html`<span class="muted">–</span>`}
                        </td>
                        <td>${when(p.completedAt ?? p.createdAt)}</td>
                      </tr>`,
                  ),
                  { className: 'payments' },
                )}
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
    // The status a person already gave changes nothing (no action, no reason kept): say so rather than seem to succeed.
    // (The status automation gave is confirmed by hand and recorded.)
    const before = await deps.moderator.call('getUser', { tenantId: tenantOf(ctx), userId: id }, callMeta(ctx));
    if (before.status !== undefined && before.status === input.status && isHumanVia(before.statusUpdatedVia)) {
      ctx.redirect(`/console/users/${id}?unchanged=1`);
      return;
    }
    await decide(deps, deciderOf(ctx), 'setUserStatus', id, { status: input.status, reason: input.reason });
    ctx.redirect(`/console/users/${id}`);
  });
}
