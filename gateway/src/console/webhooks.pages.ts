import { z } from 'zod';
import { NotFoundError, ValidationError } from '../errors';
import { parseWith } from '../http/validate';
import { replayEndpoint } from '../use-cases/replay-endpoint';
import { retryDelivery } from '../use-cases/retry-delivery';
import { html } from './html';
import {
  CONSOLE_PREFIX,
  csrfOf,
  CursorQuery,
  optionalDate,
  PAGE_SIZE,
  param,
  render,
  tenantOf,
  type ConsolePages,
} from './page';
import { formOf, safeNext } from './security';
import { dataTable, when } from './views';

/** Webhook endpoints, their delivery log, retries and replays (admins). */
export function webhookPages({ router, deps, change, adminOnly }: ConsolePages): void {
  router.get('/webhooks', adminOnly, async (ctx) => {
    const docs = (await deps.webhooks.list(tenantOf(ctx), 100))?.docs ?? [];
    const states = await Promise.all(docs.map((doc) => deps.webhooks.state(doc._id)));
    render(
      ctx,
      'Webhooks',
      html`<p class="hint">Endpoints are registered through <code>POST /api/v1/webhook-endpoints</code>.</p>
        ${dataTable(
          ['URL', 'Events', 'State', 'Created'],
          docs.map((doc, i) => {
            const state = states[i];
            return html`<tr>
              <td><a href="/console/webhooks/${doc._id}">${doc.url}</a></td>
              <td>${doc.events.length > 0 ? doc.events.join(', ') : 'all'}</td>
              <td>
                ${!doc.enabled || state?.disabledAt ? html`<span class="badge Flagged">disabled</span> ${state?.disabledReason ?? ''}` : state?.failingSince ? html`<span class="badge Suspended">failing</span>` : html`<span class="badge Compliant">enabled</span>`}
              </td>
              <td>${when(doc.createdAt.toISOString())}</td>
            </tr>`;
          }),
        )}`,
      '/console/webhooks',
    );
  });

  router.get('/webhooks/:id', adminOnly, async (ctx) => {
    const q = parseWith(CursorQuery, ctx.query, 'query parameters');
    const doc = await deps.webhooks.get(tenantOf(ctx), param(ctx, 'id'));
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
            ${csrfOf(ctx)}
            <label>Replay failed deliveries since <input type="datetime-local" name="since" required /></label>
            <button type="submit">Replay</button>
          </form>
          <p class="hint">
            Sends the failed deliveries created since then again, each with a fresh retry schedule; succeeded ones are
            not sent again. Events that came while the endpoint was disabled have no delivery: they are not replayed.
            Re-enable a disabled endpoint before replaying.
          </p>
        </section>
        ${dataTable(
          ['Created', 'Event', 'State', 'Attempts', 'Last status', 'Last duration', ''],
          page.docs.map((d) => {
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
                  ${csrfOf(ctx)} <input type="hidden" name="back" value="${ctx.originalUrl}" /><button
                    type="submit"
                    class="secondary"
                  >
                    Retry
                  </button>
                </form>
              </td>
            </tr>`;
          }),
          { className: 'deliveries' },
        )}
        <nav class="pager">
          ${page.hasMore && last ? html`<a rel="next" href="/console/webhooks/${doc._id}?after=${last._id}">Older →</a>` : null}
        </nav>`,
      '/console/webhooks',
    );
  });

  router.post('/deliveries/:id/retry', adminOnly, ...change, async (ctx) => {
    await retryDelivery(deps, tenantOf(ctx), param(ctx, 'id'));
    ctx.redirect(safeNext(formOf(ctx).back, CONSOLE_PREFIX, '/console/webhooks'));
  });

  router.post('/webhooks/:id/replay', adminOnly, ...change, async (ctx) => {
    const since = parseWith(z.object({ since: optionalDate }), formOf(ctx), 'replay form').since;
    if (since === undefined)
      throw new ValidationError('invalid replay form', [{ path: ['since'], message: 'required' }]);
    await replayEndpoint(deps, tenantOf(ctx), param(ctx, 'id'), new Date(since));
    ctx.redirect(`/console/webhooks/${param(ctx, 'id')}`);
  });
}
