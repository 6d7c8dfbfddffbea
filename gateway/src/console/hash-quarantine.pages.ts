import type { Context } from 'koa';
import { NotFoundError } from '../errors';
import { requestIdOf } from '../http/request-id';
import { dismissHashQuarantine } from '../use-cases/hash-banks/dismiss-hash-quarantine';
import { listHashQuarantines } from '../use-cases/hash-banks/list-hash-quarantines';
import { releaseHashQuarantine } from '../use-cases/hash-banks/release-hash-quarantine';
import type { BankCaller } from '../use-cases/hash-banks/views';
import { html } from './html';
import { csrfOf, render, tenantOf, type ConsolePages } from './page';
import { badge, when } from './views';

const HASH_ID = /^hsh_[A-Za-z0-9_-]{22}$/;

function hashParam(ctx: Context): string {
  const value = String((ctx.params as Record<string, string>).hashId ?? '');
  if (!HASH_ID.test(value)) throw new NotFoundError('quarantined hash not found');
  return value;
}

/**
 * The flood quarantine in the console (docs/hash-banks.md, "Flood quarantine"): the hashes that matched past their
 * bank's threshold, with how many matches each holds. An admin releases one (its held matches are applied) or
 * dismisses it (they are dropped and the hash stays disabled). Same use cases as `/api/v1/hash-quarantines`.
 */
export function hashQuarantinePages({ router, deps, change, adminOnly }: ConsolePages): void {
  const caller = (ctx: Context): BankCaller => ({
    moderator: deps.moderator,
    tenantId: tenantOf(ctx),
    requestId: requestIdOf(ctx),
  });

  router.get('/hash-quarantine', async (ctx) => {
    const quarantines = await listHashQuarantines(caller(ctx));
    const button = (hashId: string, action: 'release' | 'dismiss', label: string) =>
      html`<form method="post" action="/console/hash-quarantine/${hashId}/${action}" class="inline">
        ${csrfOf(ctx)}<button type="submit" class="${action === 'release' ? '' : 'secondary'}">${label}</button>
      </form>`;
    render(
      ctx,
      'Hash quarantine',
      html`<p class="muted">
          A hash that matches more often than its bank's flood threshold allows (a meme, usually) stops acting. Its
          matches are held here. Release it to apply them (never over a person's decision), or dismiss it to drop them
          and keep the hash disabled.
        </p>
        <table class="hash-quarantine">
          <thead>
            <tr>
              <th>Hash</th>
              <th>Bank</th>
              <th>Matches</th>
              <th>Held</th>
              <th>Metadata</th>
              <th>Since</th>
              <th></th>
            </tr>
          </thead>
          <tbody>
            ${quarantines.map(
              (q) =>
                html`<tr data-row data-id="${q.hashId}">
                  <td><code>${q.hashId}</code> ${q.state === 'released' ? badge('released') : null}</td>
                  <td><a href="/console/hash-banks/${q.bank.id}">${q.bank.name}</a> <code>${q.kind}</code></td>
                  <td>${String(q.count)} in ${String(q.windowSeconds)} s (threshold ${String(q.threshold)})</td>
                  <td>${String(q.held)}${q.overflow > 0 ? ` (+${q.overflow} not kept)` : ''}</td>
                  <td>${Object.entries(q.metadata).map(([key, value]) => html`<code>${key}</code>=${value} `)}</td>
                  <td>${when(q.since)}</td>
                  <td>
                    ${button(q.hashId, 'release', 'Release')}
                    ${q.state === 'quarantined' ? button(q.hashId, 'dismiss', 'Dismiss') : null}
                  </td>
                </tr>`,
            )}
          </tbody>
        </table>
        ${quarantines.length === 0 ? html`<p class="muted" id="empty">No hash is in quarantine.</p>` : null}`,
      '/console/hash-quarantine',
    );
  });

  router.post('/hash-quarantine/:hashId/release', adminOnly, ...change, async (ctx) => {
    await releaseHashQuarantine(caller(ctx), hashParam(ctx));
    ctx.redirect('/console/hash-quarantine');
  });

  router.post('/hash-quarantine/:hashId/dismiss', adminOnly, ...change, async (ctx) => {
    await dismissHashQuarantine(caller(ctx), hashParam(ctx));
    ctx.redirect('/console/hash-quarantine');
  });
}
