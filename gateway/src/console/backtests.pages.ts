import { z } from 'zod';
import type { BacktestResult } from '@vigil/proto';
import { parseWith } from '../http/validate';
import { backtestOf, backtestView, createBacktest } from '../routes/backtests/backtests.routes';
import { html, type Html } from './html';
import { idParam } from '../routes/deps';
import { actorOf, callMeta, csrfOf, render, tenantOf, type ConsolePages } from './page';
import { formOf } from './security';
import { when } from './views';

const BacktestForm = z.object({ version: z.coerce.number().int().nonnegative().max(999_999_999) });

const examples = (list: Array<{ recordId: string; reasons: string[] }>): Html =>
  list.length === 0
    ? html`<span class="muted">none</span>`
    : html`<ul class="examples">
        ${list.map(
          (item) =>
            html`<li>
              <a href="/console/records/${item.recordId}">${item.recordId}</a>
              <span class="muted">${item.reasons.join('; ')}</span>
            </li>`,
        )}
      </ul>`;

function resultView(result: BacktestResult): Html {
  const users = (ids: string[]) =>
    ids.length === 0
      ? html`<span class="muted">none</span>`
      : html`${ids.map((id) => html`<a href="/console/users/${id}">${id}</a> `)}`;
  return html`<section class="card backtest-result">
      <h2>What would change</h2>
      <table>
        <tbody>
          <tr>
            <th>Records judged</th>
            <td class="judged">
              ${result.judged}${result.truncated ? html` <span class="muted">(limit reached)</span>` : null}
            </td>
          </tr>
          <tr>
            <th>Passthrough, skipped</th>
            <td>${result.skipped.passthrough}</td>
          </tr>
          <tr>
            <th>Would be Flagged</th>
            <td class="to-flagged">${result.changes.toFlagged} ${examples(result.changes.toFlaggedExamples)}</td>
          </tr>
          <tr>
            <th>Would be Compliant</th>
            <td class="to-compliant">${result.changes.toCompliant} ${examples(result.changes.toCompliantExamples)}</td>
          </tr>
          <tr>
            <th>Human decisions kept against it</th>
            <td>${result.changes.heldByHumans}</td>
          </tr>
          <tr>
            <th>Agreement with human decisions</th>
            <td class="humans">${result.humans.agree} of ${result.humans.reviewed}</td>
          </tr>
          <tr>
            <th>Users who would be suspended (threshold ${result.users.threshold})</th>
            <td class="would-suspend">${users(result.users.wouldSuspend)}</td>
          </tr>
          <tr>
            <th>Users who would be reinstated</th>
            <td>${users(result.users.wouldReinstate)}</td>
          </tr>
        </tbody>
      </table>
    </section>
    <section class="card">
      <h2>Per rule</h2>
      <table class="backtest-rules">
        <thead>
          <tr>
            <th>Rule</th>
            <th>Would flag</th>
            <th>Confirmed by humans</th>
            <th>Overturned by humans</th>
            <th>Examples</th>
          </tr>
        </thead>
        <tbody>
          ${result.rules.map(
            (rule) =>
              html`<tr class="rule" data-rule="${rule.ruleId}">
                <td>${rule.ruleId}</td>
                <td class="flags">${rule.flags}</td>
                <td>${rule.humanConfirmed}</td>
                <td>${rule.humanOverturned}</td>
                <td>${examples(rule.examples)}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </section>`;
}

/** "Backtest this draft" from the rules page, and the backtest's progress and result (admins). */
export function backtestPages({ router, deps, change, adminOnly }: ConsolePages): void {
  router.post('/backtests', adminOnly, ...change, async (ctx) => {
    const { version } = parseWith(BacktestForm, { version: formOf(ctx).version }, 'backtest form');
    const state = await createBacktest(
      deps,
      { tenantId: tenantOf(ctx), author: actorOf(ctx), requestId: callMeta(ctx).requestId },
      { version },
    );
    ctx.redirect(`/console/backtests/${state.job._id}`);
  });

  router.get('/backtests/:id', adminOnly, async (ctx) => {
    const view = backtestView(await backtestOf(deps, tenantOf(ctx), idParam(ctx)));
    const running = view.status === 'queued' || view.status === 'running';
    render(
      ctx,
      `Backtest of v${view.version}`,
      html`<section class="card">
          <h2>Backtest of rule set v${view.version}</h2>
          <p>
            Status: <strong class="backtest-status">${view.status}</strong>${view.error ? html` (${view.error})` : null}
            · ${view.progress.processed} of ${view.progress.selected ?? '…'} records · started ${when(view.startedAt)}
          </p>
          <p class="hint">
            A backtest changes nothing: no event, webhook, email, payment action or user status. Kept until
            ${when(view.expiresAt)}.
          </p>
          ${
            running
              ? html`<p>
                    <a class="refresh" href="/console/backtests/${view.id}">Refresh</a>
                  </p>
                  <form method="post" action="/console/backtests/${view.id}/cancel">
                    ${csrfOf(ctx)}
                    <button type="submit">Cancel</button>
                  </form>`
              : null
          }
          <p><a href="/console/settings">Back to the rules</a></p>
        </section>
        ${view.result ? resultView(view.result) : null}`,
      '/console/settings',
    );
  });

  router.post('/backtests/:id/cancel', adminOnly, ...change, async (ctx) => {
    const state = await backtestOf(deps, tenantOf(ctx), idParam(ctx));
    await deps.backtests.cancel(state);
    ctx.redirect(`/console/backtests/${state.job._id}`);
  });
}
