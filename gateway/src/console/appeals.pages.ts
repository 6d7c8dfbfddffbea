import { z } from 'zod';
import { AppealStatus, LIMITS } from '@vigil/proto';
import { parseWith } from '../http/validate';
import { toAppealView, toRecordView, toUserView } from '../routes/shared/presenters';
import { decide } from '../use-cases/decide';
import { html } from './html';
import {
  callMeta,
  csrfOf,
  optionalText,
  param,
  queryString,
  Reason,
  render,
  tenantOf,
  type ConsolePages,
  deciderOf,
} from './page';
import { formOf } from './security';
import { badge, when } from './views';

const AppealsQuery = z.object({
  status: AppealStatus.default('Open'),
  after: optionalText(LIMITS.queryId),
});

/** Appeals by status, each with its user's flagged records, and their decision. */
export function appealPages({ router, deps, change }: ConsolePages): void {
  router.get('/appeals', async (ctx) => {
    const q = parseWith(AppealsQuery, ctx.query, 'query parameters');
    const result = await deps.moderator.call(
      'listAppeals',
      { tenantId: tenantOf(ctx), limit: 20, startingAfter: q.after, status: q.status },
      callMeta(ctx),
    );
    const appeals = result.appeals.map(toAppealView);
    const details = await Promise.all(
      appeals.map(async (appeal) => {
        const [user, flagged] = await Promise.all([
          deps.moderator.call('getUser', { tenantId: tenantOf(ctx), userId: appeal.user }, callMeta(ctx)),
          deps.moderator.call(
            'listRecords',
            { tenantId: tenantOf(ctx), userId: appeal.user, status: 'Flagged', limit: 5, newestFirst: true },
            callMeta(ctx),
          ),
        ]);
        return { user: toUserView(user, null), records: flagged.records.map(toRecordView), more: flagged.hasMore };
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
            ${detail.more ? html`<p><a href="/console/records?status=Flagged&user=${appeal.user}">All flagged records of this user →</a></p>` : null}
            ${appeal.decisionReason ? html`<p>Decision: <q>${appeal.decisionReason}</q></p>` : null}
            ${
              appeal.status === 'Open'
                ? html`<form method="post" action="/console/appeals/${appeal.id}/decision" class="decision">
                    ${csrfOf(ctx)}
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
    await decide(deps, deciderOf(ctx), 'decideAppeal', param(ctx, 'id'), {
      decision: input.decision,
      reason: input.reason,
    });
    ctx.redirect('/console/appeals');
  });
}
