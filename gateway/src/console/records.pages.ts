import { z } from 'zod';
import { LIMITS, RecordStatus, ulid } from '@vigil/proto';
import { parseWith } from '../http/validate';
import { parseMetadata } from '../routes/shared/paging.schema';
import { toRecordView } from '../routes/shared/presenters';
import { decide } from '../use-cases/decide';
import { html, safeLink } from './html';
import {
  callMeta,
  CONSOLE_PREFIX,
  csrfOf,
  optionalDate,
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
import { formOf, safeNext } from './security';
import { dataTable, badge, historyTable, imageScores, links, metadataTable, when } from './views';

const InboxQuery = z.object({
  status: z.enum(['Flagged', 'Compliant', 'all']).default('Flagged'),
  entity: optionalText(LIMITS.entity),
  user: optionalText(LIMITS.queryId),
  from: optionalDate,
  to: optionalDate,
  after: optionalText(LIMITS.queryId),
  before: optionalText(LIMITS.queryId),
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

/** The inbox, a record's page and the decision by hand. */
export function recordPages({ router, deps, change }: ConsolePages): void {
  router.get('/records', async (ctx) => {
    const q = parseWith(InboxQuery, ctx.query, 'query parameters');
    const result = await deps.moderator.call(
      'listRecords',
      {
        tenantId: tenantOf(ctx),
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
      callMeta(ctx),
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
          <label>From (UTC) <input type="date" name="from" value="${q.from ?? ''}" /></label>
          <label>To (UTC) <input type="date" name="to" value="${q.to ?? ''}" /></label>
          <button type="submit">Filter</button>
        </form>
        <p class="hint">
          Keys: <kbd>j</kbd>/<kbd>k</kbd> next/previous, <kbd>o</kbd> open, <kbd>a</kbd> approve as Compliant,
          <kbd>f</kbd> confirm Flagged.
        </p>
        ${
          records.length === 0
            ? html`<p class="empty">Nothing to review.</p>`
            : dataTable(
                ['Record', 'Status', 'Entity', 'Reasons', 'User', 'Created', 'Actions'],
                records.map(
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
                          ${csrfOf(ctx)}${decisionId()}<input type="hidden" name="back" value="${back}" />
                          <input type="hidden" name="status" value="Compliant" /><input
                            type="hidden"
                            name="reason"
                            value="Approved in review"
                          />
                          <button type="submit" data-key="a">Approve</button>
                        </form>
                        <form method="post" action="/console/records/${r.id}/moderation">
                          ${csrfOf(ctx)}${decisionId()}<input type="hidden" name="back" value="${back}" />
                          <input type="hidden" name="status" value="Flagged" /><input
                            type="hidden"
                            name="reason"
                            value="Confirmed in review"
                          />
                          <button type="submit" data-key="f" class="secondary">Flag</button>
                        </form>
                      </td>
                    </tr>`,
                ),
                { className: 'inbox', keyboardRows: true },
              )
        }
        <nav class="pager">
          ${newer && first ? html`<a rel="prev" href="/console/records${queryString({ ...filters, before: first.id })}">← Newer</a>` : null}
          ${older && last ? html`<a rel="next" href="/console/records${queryString({ ...filters, after: last.id })}">Older →</a>` : null}
        </nav>`,
      '/console/records',
    );
  });

  router.get('/records/:id', async (ctx) => {
    const id = param(ctx, 'id');
    const [record, history] = await Promise.all([
      deps.moderator.call('getRecord', { tenantId: tenantOf(ctx), recordId: id }, callMeta(ctx)),
      deps.moderator.call('getRecordEvents', { tenantId: tenantOf(ctx), recordId: id }, callMeta(ctx)),
    ]);
    const view = toRecordView(record);
    // The content is not part of the record projection the API returns: the latest upsert event holds it.
    const upserts = history.events.filter((e) => e.type === 'RecordUpserted').map((e) => parseMetadata(e.dataJson));
    const content = contentOf(upserts[upserts.length - 1]?.content);
    // The image class scores of the latest automatic moderation, if it judged images (a manual decision keeps them).
    const judged = history.events
      .filter((e) => e.type === 'RecordModerated')
      .map((e) => parseMetadata(e.dataJson))
      .filter((data) => data.via !== 'Manual');
    const images = judged[judged.length - 1]?.images;
    render(
      ctx,
      view.name ?? view.clientId,
      html`<section class="card">
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              ${badge(view.moderationStatus)} ${view.moderationStatusVia ? html`via ${view.moderationStatusVia}` : null}
            </dd>
            <dt>Open reports</dt>
            <dd>
              ${
                view.openReportsCount > 0
                  ? html`<a href="/console/reports">${view.openReportsCount}</a>`
                  : html`<span class="muted">0</span>`
              }
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
          ${imageScores(images)}
        </section>
        <section class="card">
          <h2>Moderate by hand</h2>
          <form method="post" action="/console/records/${view.id}/moderation" class="decision">
            ${csrfOf(ctx)}${decisionId()}
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
    const input = parseWith(
      z.object({ status: RecordStatus, reason: Reason, moderationId: DecisionId.optional() }),
      formOf(ctx),
      'moderation form',
    );
    const id = param(ctx, 'id');
    await decide(deps, deciderOf(ctx), 'moderateRecordManually', id, {
      status: input.status,
      reason: input.reason,
      // The form's own id: sent twice (a double click, a resubmitted page), it makes one decision.
      moderationId: input.moderationId ?? '',
    });
    ctx.redirect(safeNext(formOf(ctx).back, CONSOLE_PREFIX, `/console/records/${id}`));
  });
}

/** A decision form's id, made when the page is rendered: `mod_` and a ULID, as the moderator's moderation ids. */
const DecisionId = z.string().regex(/^mod_[0-9A-HJKMNP-TV-Z]{26}$/, 'must be mod_ and a ULID');
const decisionId = () => html`<input type="hidden" name="moderationId" value="mod_${ulid()}" />`;
