import { z } from 'zod';
import type { Context } from 'koa';
import { LIMITS, POLICY_ID, ReportAction } from '@vigil/proto';
import { withDefaultPolicy } from '../domain/default-policy';
import { parseWith } from '../http/validate';
import type { ReportView } from '../routes/reports/reports.schema';
import { toReportView } from '../routes/shared/presenters';
import { decide } from '../use-cases/decide';
import { html } from './html';
import { callMeta, param, Reason, render, tenantOf, csrfOf, type ConsolePages, deciderOf } from './page';
import { formOf } from './security';
import { badge, when } from './views';

/** Open reports read per kind (trusted flaggers', the others') for one queue page. */
const QUEUE_READ = 100;

type Report = z.infer<typeof ReportView>;

/**
 * The review order: trusted flaggers' reports first (Art. 22 DSA), then reports on the targets with the most open
 * reports, then the oldest. Each kind is read oldest first through the `tenant_sort` index, so the queue holds the 100
 * oldest open reports of each kind, ordered here.
 */
function queueOrder(reports: Report[]): Report[] {
  return [...reports].sort(
    (a, b) =>
      Number(b.reporter.type === 'trusted_flagger') - Number(a.reporter.type === 'trusted_flagger') ||
      b.targetOpenReports - a.targetOpenReports ||
      a.createdAt.localeCompare(b.createdAt) ||
      a.id.localeCompare(b.id),
  );
}

const DecisionForm = z.object({
  outcome: z.enum(['Actioned', 'NoAction']),
  action: z.preprocess((value) => (value === '' ? undefined : value), ReportAction.optional()),
  reason: Reason,
  policy: z.preprocess((value) => (value === '' ? undefined : value), z.string().regex(POLICY_ID).optional()),
});

const ComplaintDecisionForm = z.object({
  outcome: z.enum(['Upheld', 'Rejected']),
  action: z.preprocess((value) => (value === '' ? undefined : value), ReportAction.optional()),
  reason: Reason,
  policy: z.preprocess((value) => (value === '' ? undefined : value), z.string().regex(POLICY_ID).optional()),
});

const actionsOn = (report: Report): Array<[string, string]> =>
  report.target.type === 'record'
    ? [['Flag', 'Flag the record']]
    : [
        ['Suspend', 'Suspend the user'],
        ['Ban', 'Ban the user'],
      ];

const targetLink = (report: Report) =>
  report.target.type === 'record'
    ? html`<a href="/console/records/${report.target.id}">record ${report.target.clientId}</a>`
    : html`<a href="/console/users/${report.target.id}">user ${report.target.clientId}</a>`;

/** A report's ground and category, and the reporter's explanation. */
const groundAndText = (report: Report) =>
  html`<p>
      ${badge(report.ground === 'ILLEGAL_CONTENT' ? 'Illegal content' : 'Against the terms')}
      <code>${report.category}</code>
    </p>
    <blockquote class="report-text">${report.explanation}</blockquote>`;

/** The reports queue, and a decision on each report: act on its target, or no action with a reason. */
export function reportPages({ router, deps, change }: ConsolePages): void {
  router.get('/reports', async (ctx) => {
    const read = (trusted: boolean) =>
      deps.moderator.call(
        'listReports',
        { tenantId: tenantOf(ctx), limit: QUEUE_READ, status: 'Open', trusted },
        callMeta(ctx),
      );
    const [trusted, others, complained, settings] = await Promise.all([
      read(true),
      read(false),
      deps.moderator.call(
        'listReports',
        { tenantId: tenantOf(ctx), limit: QUEUE_READ, complaint: 'Open' },
        callMeta(ctx),
      ),
      deps.configStore.getSettings(tenantOf(ctx)),
    ]);
    const complaints = complained.reports.map((report) => toReportView(report, { withEmail: false }));
    const policies = withDefaultPolicy(settings.policies);
    // The policy a decision rests on, in both kinds of decision form.
    const policyField = html`<label
      >Policy
      <select name="policy">
        ${policies.map((policy) => html`<option value="${policy.id}">${policy.name}</option>`)}
      </select>
    </label>`;
    const reports = queueOrder(
      [...trusted.reports, ...others.reports].map((report) => toReportView(report, { withEmail: false })),
    );
    const more = trusted.hasMore || others.hasMore;
    render(
      ctx,
      'Reports',
      html`${
        complaints.length > 0
          ? html`<section id="complaints">
              <h2>Complaints to decide</h2>
              ${complaints.map(
                (report) =>
                  html`<article class="card report complaint" data-row data-id="${report.id}">
                    <header>
                      <span
                        >Complaint by
                        ${report.reporter.type === 'trusted_flagger' ? (report.reporter.name ?? report.reporter.id) : report.reporter.id}</span
                      >
                      · ${targetLink(report)} · filed ${when(report.complaint?.filedAt ?? report.updatedAt)}
                    </header>
                    ${groundAndText(report)}
                    <p>No action was taken: <q>${report.decision?.reason ?? ''}</q></p>
                    <blockquote class="complaint-text">${report.complaint?.text ?? ''}</blockquote>
                    <form method="post" action="/console/reports/${report.id}/complaint/decision" class="decision">
                      ${csrfOf(ctx)}
                      <label
                        >Reason <textarea name="reason" required maxlength="${LIMITS.reason}" rows="2"></textarea>
                      </label>
                      ${policyField}
                      <input type="hidden" name="outcome" value="Upheld" />
                      ${actionsOn(report).map(
                        ([action, label]) =>
                          html`<button type="submit" name="action" value="${action}">Uphold: ${label}</button>`,
                      )}
                      <button type="submit" name="outcome" value="Rejected" class="secondary">Reject</button>
                    </form>
                  </article>`,
              )}
              ${complained.hasMore ? html`<p class="muted">More complaints wait behind these.</p>` : null}
            </section>`
          : null
      }
      ${reports.length === 0 ? html`<p class="empty">No open reports.</p>` : null}
      ${reports.map((report) => {
        const actions = actionsOn(report);
        return html`<article class="card report" data-row data-id="${report.id}">
          <header>
            ${
              report.reporter.type === 'trusted_flagger'
                ? html`<strong class="badge trusted"
                    >Trusted flagger: ${report.reporter.name ?? report.reporter.id}</strong
                  >`
                : html`<span>Reported by ${report.reporter.id}</span>`
            }
            · ${targetLink(report)} · <span class="open-count">${report.targetOpenReports} open</span> ·
            ${when(report.createdAt)}
          </header>
          ${groundAndText(report)}
          ${
            report.legalGround
              ? html`<p>Legal ground: ${report.legalGround} · URL: <code>${report.url ?? ''}</code></p>`
              : null
          }
          <form method="post" action="/console/reports/${report.id}/decision" class="decision">
            ${csrfOf(ctx)}
            <label>Reason <textarea name="reason" required maxlength="${LIMITS.reason}" rows="2"></textarea></label>
            ${policyField}
            <input type="hidden" name="outcome" value="Actioned" />
            ${actions.map(
              ([action, label]) => html`<button type="submit" name="action" value="${action}">${label}</button>`,
            )}
            <button type="submit" name="outcome" value="NoAction" class="secondary">No action</button>
          </form>
        </article>`;
      })}
      ${more ? html`<p class="muted">More open reports wait behind these; decide some to see them.</p>` : null}`,
      '/console/reports',
    );
  });

  /** Decides on the report of the path (`method`) or its complaint as the form says, then back to the queue. */
  async function decideOn(
    ctx: Context,
    method: 'decideReport' | 'decideReportComplaint',
    input: { outcome: string; action?: string; reason: string; policy?: string },
  ) {
    await decide(deps, deciderOf(ctx), method, param(ctx, 'id'), {
      outcome: input.outcome,
      action: input.action,
      reason: input.reason,
      policy: input.policy ?? '',
    });
    ctx.redirect('/console/reports');
  }

  router.post('/reports/:id/decision', ...change, async (ctx) => {
    // "No action" sends outcome twice (the hidden Actioned, then its own, in form order); formOf keeps the last one.
    await decideOn(ctx, 'decideReport', parseWith(DecisionForm, formOf(ctx), 'decision form'));
  });

  router.post('/reports/:id/complaint/decision', ...change, async (ctx) => {
    // "Reject" sends outcome twice (the hidden Upheld, then its own); formOf keeps the last one.
    const form = parseWith(ComplaintDecisionForm, formOf(ctx), 'complaint decision form');
    await decideOn(ctx, 'decideReportComplaint', form);
  });
}
