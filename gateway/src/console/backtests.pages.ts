import { z } from 'zod';
import type { BacktestResult } from '@vigil/proto';
import { parseWith } from '../http/validate';
import { idParam } from '../http/params';
import { backtestView, retroactionView } from '../routes/shared/presenters';
import { applyBacktest } from '../use-cases/apply-backtest';
import { batchJobOf, cancelBatchJob, type BatchJobKindName } from '../use-cases/batch-jobs';
import { createBacktest } from '../use-cases/create-backtest';
import { html, type Html } from './html';
import { actorOf, callMeta, csrfOf, render, tenantOf, type ConsolePages } from './page';
import { formOf } from './security';
import { dataTable, when } from './views';

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
      ${dataTable(
        ['Rule', 'Would flag', 'Confirmed by humans', 'Overturned by humans', 'Examples'],
        result.rules.map(
          (rule) =>
            html`<tr class="rule" data-rule="${rule.ruleId}">
              <td>${rule.ruleId}</td>
              <td class="flags">${rule.flags}</td>
              <td>${rule.humanConfirmed}</td>
              <td>${rule.humanOverturned}</td>
              <td>${examples(rule.examples)}</td>
            </tr>`,
        ),
        { className: 'backtest-rules' },
      )}
    </section>`;
}

/**
 * The confirmation of a retroaction: what applying the backtest's version would change (the result above), and the
 * button. Only for the live version: a draft is promoted first.
 */
function applyCard(id: string, version: number, live: number | null, result: BacktestResult, csrf: Html): Html {
  if (live !== version)
    return html`<section class="card apply">
      <h2>Apply to these records</h2>
      <p class="hint">Promote v${version} to apply it to these records: only the live version is applied.</p>
    </section>`;
  return html`<section class="card apply">
    <h2>Apply v${version} to these records</h2>
    <p class="apply-effect">
      It moderates these records again with v${version}, the live version: ${result.changes.toFlagged} would become
      Flagged and ${result.changes.toCompliant} Compliant; ${result.users.wouldSuspend.length} users would be suspended.
      Webhooks, emails and suspensions follow as for live moderation. Human decisions stay.
    </p>
    <form method="post" action="/console/backtests/${id}/apply">
      ${csrf}
      <button type="submit" class="confirm-apply">Apply to these records</button>
    </form>
  </section>`;
}

/** A running job's refresh link and cancel button (`button.cancel-backtest`, `button.cancel-retroaction`). */
const runningControls = (kind: BatchJobKindName, id: string, csrf: Html): Html =>
  html`<p><a class="refresh" href="/console/${kind}/${id}">Refresh</a></p>
    <form method="post" action="/console/${kind}/${id}/cancel">
      ${csrf}
      <button type="submit" class="cancel-${kind.slice(0, -1)}">Cancel</button>
    </form>`;

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
    const view = backtestView(await batchJobOf(deps, 'backtests', tenantOf(ctx), idParam(ctx)));
    const running = view.status === 'queued' || view.status === 'running';
    const live = view.result ? (await deps.configStore.getRules(tenantOf(ctx))).version : null;
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
          ${running ? runningControls('backtests', view.id, csrfOf(ctx)) : null}
          <p><a href="/console/settings">Back to the rules</a></p>
        </section>
        ${view.result ? resultView(view.result) : null}
        ${view.result ? applyCard(view.id, view.version, live, view.result, csrfOf(ctx)) : null}`,
      '/console/settings',
    );
  });

  router.post('/backtests/:id/apply', adminOnly, ...change, async (ctx) => {
    const state = await applyBacktest(deps, { tenantId: tenantOf(ctx), author: actorOf(ctx) }, idParam(ctx));
    ctx.redirect(`/console/retroactions/${state.job._id}`);
  });

  router.get('/retroactions/:id', adminOnly, async (ctx) => {
    const view = retroactionView(await batchJobOf(deps, 'retroactions', tenantOf(ctx), idParam(ctx)));
    const running = view.status === 'queued' || view.status === 'running';
    const { predicted, counts } = view;
    render(
      ctx,
      `Applying v${view.version}`,
      html`<section class="card">
        <h2>Applying rule set v${view.version}</h2>
        <p>
          Status:
          <strong class="retroaction-status">${view.status}</strong>${view.error ? html` (${view.error})` : null} ·
          <span class="retroaction-progress">${view.progress.processed} of ${view.progress.selected ?? '…'}</span>
          records · started ${when(view.startedAt)}
        </p>
        <p class="hint">
          From <a href="/console/backtests/${view.backtestId}">backtest ${view.backtestId}</a>. Each change is a
          moderation under v${view.version}: webhooks, emails and suspensions follow as for live moderation.
        </p>
        <table class="retroaction-counts">
          <thead>
            <tr>
              <th></th>
              <th>Predicted</th>
              <th>Done so far</th>
            </tr>
          </thead>
          <tbody>
            <tr>
              <th>To Flagged</th>
              <td>${predicted.changes.toFlagged}</td>
              <td class="done-to-flagged">${counts.toFlagged}</td>
            </tr>
            <tr>
              <th>To Compliant</th>
              <td>${predicted.changes.toCompliant}</td>
              <td class="done-to-compliant">${counts.toCompliant}</td>
            </tr>
            <tr>
              <th>Human decisions kept</th>
              <td>${predicted.changes.heldByHumans}</td>
              <td>${counts.heldByHumans}</td>
            </tr>
            <tr>
              <th>Unchanged</th>
              <td></td>
              <td>${counts.unchanged}</td>
            </tr>
            <tr>
              <th>Gone or passthrough</th>
              <td></td>
              <td>${counts.skipped}</td>
            </tr>
          </tbody>
        </table>
        ${running ? runningControls('retroactions', view.id, csrfOf(ctx)) : null}
        <p><a href="/console/settings">Back to the rules</a></p>
      </section>`,
      '/console/settings',
    );
  });

  for (const kind of ['retroactions', 'backtests'] as const)
    router.post(`/${kind}/:id/cancel`, adminOnly, ...change, async (ctx) => {
      const state = await cancelBatchJob(deps, kind, tenantOf(ctx), idParam(ctx));
      ctx.redirect(`/console/${kind}/${state.job._id}`);
    });
}
