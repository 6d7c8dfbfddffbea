import type { Context } from 'koa';
import { parseWith } from '../http/validate';
import { csvFileName, transparencyCsv } from '../domain/transparency-report';
import {
  TransparencyReportQuery,
  type TransparencyReport,
} from '../routes/transparency-report/transparency-report.schema';
import { transparencyReportOf } from '../use-cases/get-transparency-report';
import { html, type Html } from './html';
import { render, tenantOf, type ConsolePages } from './page';

const WIDTH = 720;
const ROW = 22;
const LABEL = 300;
const PAD = 8;
const DAY_MS = 86_400_000;

/** Names that read better than the enumeration's words. */
const LABELS: Record<string, string> = {
  AUTOMATED_DECISION_FULLY: 'fully automated',
  AUTOMATED_DECISION_PARTIALLY: 'partially automated',
  AUTOMATED_DECISION_NOT_AUTOMATED: 'not automated',
  STATEMENT_CATEGORY_OTHER_VIOLATION_TC: 'other violation of the terms',
  DECISION_ACCOUNT_SUSPENDED: 'account suspended',
  DECISION_ACCOUNT_TERMINATED: 'account terminated',
  DECISION_MONETARY_SUSPENSION: 'payouts suspended',
  DECISION_MONETARY_TERMINATION: 'payouts ended',
};

/** The words of an enumeration value: `STATEMENT_CATEGORY_SCAMS_AND_FRAUD` → `scams and fraud`. */
function words(key: string): string {
  const label = LABELS[key];
  if (label) return label;
  return key
    .replace(/^(STATEMENT_CATEGORY_|DECISION_VISIBILITY_|DECISION_GROUND_|SOURCE_)/, '')
    .toLowerCase()
    .replace(/_/g, ' ');
}

const seconds = (value: number | null): string => {
  if (value === null) return '–';
  if (value < 120) return `${value} s`;
  if (value < 7200) return `${Math.round(value / 6) / 10} min`;
  return `${Math.round(value / 360) / 10} h`;
};
const percent = (rate: number | null): string => (rate === null ? '–' : `${Math.round(rate * 1000) / 10} %`);

interface Bar {
  key: string;
  value: number;
  /** A second, darker bar over the first (e.g. actioned of received). */
  part?: number;
}

/**
 * A horizontal bar chart of counts, one row per key with a count (zero rows left out), drawn as plain SVG like the
 * precision chart: no script, nothing a content security policy would block.
 */
function bars(name: string, label: string, rows: Bar[]): Html {
  const shown = rows.filter((row) => row.value > 0).sort((a, b) => b.value - a.value);
  if (shown.length === 0) return html`<p class="muted no-data">None in this period.</p>`;
  const max = Math.max(...shown.map((row) => row.value));
  const plot = WIDTH - LABEL - PAD * 2 - 40;
  const height = shown.length * ROW + PAD * 2;
  const widthOf = (value: number) => Math.max(1, (plot * value) / max);
  return html`<svg
    class="report-chart ${name}"
    viewBox="0 0 ${WIDTH} ${height}"
    width="${WIDTH}"
    height="${height}"
    role="img"
    aria-label="${label}"
  >
    ${shown.map((row, index) => {
      const y = PAD + index * ROW;
      return html`<g class="bar" data-key="${row.key}" data-value="${row.value}">
        <title>${words(row.key)}: ${row.value}</title>
        <text x="${LABEL - 6}" y="${y + 15}" text-anchor="end" font-size="12">${words(row.key)}</text>
        <rect x="${LABEL}" y="${y + 3}" width="${widthOf(row.value)}" height="${ROW - 6}" fill="#9aa5b1" />
        ${
          row.part
            ? html`<rect
                class="part"
                x="${LABEL}"
                y="${y + 3}"
                width="${widthOf(row.part)}"
                height="${ROW - 6}"
                fill="#3e4c59"
              />`
            : null
        }
        <text x="${LABEL + widthOf(row.value) + 6}" y="${y + 15}" font-size="12">${row.value}</text>
      </g>`;
    })}
  </svg>`;
}

const entries = (record: Record<string, number>, part?: Record<string, number>): Bar[] =>
  Object.entries(record).map(([key, value]) => ({ key, value, ...(part ? { part: part[key] ?? 0 } : {}) }));

function sections(report: TransparencyReport): Html {
  const { notices, ownInitiative: own, complaints, automatedMeans: auto } = report;
  return html`<section class="card notices">
      <h2>Notices from users and trusted flaggers</h2>
      <table class="report-notices">
        <thead>
          <tr>
            <th>Source</th>
            <th>Received</th>
            <th>Decided</th>
            <th>Median time to decide</th>
          </tr>
        </thead>
        <tbody>
          <tr data-source="user">
            <td>Users</td>
            <td>${notices.received.bySource.user}</td>
            <td>${notices.decided.bySource.user}</td>
            <td>${seconds(notices.medianSecondsToDecide.user)}</td>
          </tr>
          <tr data-source="trustedFlagger">
            <td>Trusted flaggers</td>
            <td>${notices.received.bySource.trustedFlagger}</td>
            <td>${notices.decided.bySource.trustedFlagger}</td>
            <td>${seconds(notices.medianSecondsToDecide.trustedFlagger)}</td>
          </tr>
          <tr data-source="all">
            <td>All</td>
            <td>${notices.received.total}</td>
            <td>${notices.decided.total}</td>
            <td>${seconds(notices.medianSecondsToDecide.all)}</td>
          </tr>
        </tbody>
      </table>
      <p class="hint">
        Decided: ${notices.decided.actioned} acted on, ${notices.decided.noAction} with no action. Illegal content
        claimed in ${notices.received.byGround.ILLEGAL_CONTENT ?? 0}.
      </p>
      <h3>By category</h3>
      ${bars(
        'notice-categories',
        'Notices received and acted on by category',
        entries(notices.received.byCategory, notices.decided.actionedByCategory),
      )}
      <p class="hint">Light bars: notices received. Dark bars: notices acted on.</p>
    </section>
    <section class="card own">
      <h2>Own-initiative restrictions</h2>
      <p>
        <strong class="own-total">${own.total}</strong> restrictions, ${own.automatedDetection} detected by automated
        means.
      </p>
      <h3>By type of restriction</h3>
      ${bars('own-restrictions', 'Own-initiative restrictions by type', entries(own.byRestriction))}
      <h3>By category</h3>
      ${bars('own-categories', 'Own-initiative restrictions by category', entries(own.byCategory))}
      <table class="report-own">
        <tbody>
          ${Object.entries(own.byAutomatedDecision).map(
            ([key, value]) =>
              html`<tr data-key="${key}">
                <td>${words(key)[0]!.toUpperCase()}${words(key).slice(1)}</td>
                <td>${value}</td>
              </tr>`,
          )}
          ${Object.entries(own.byGround).map(
            ([key, value]) =>
              html`<tr data-key="${key}">
                <td>Ground: ${words(key)}</td>
                <td>${value}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </section>
    <section class="card complaints">
      <h2>Complaints</h2>
      <table class="report-complaints">
        <tbody>
          <tr data-key="received">
            <td>Received</td>
            <td>${complaints.received.total}</td>
          </tr>
          <tr data-key="upheld">
            <td>Decided, decision upheld</td>
            <td>${complaints.decided.upheld}</td>
          </tr>
          <tr data-key="reversed">
            <td>Decided, decision reversed</td>
            <td>${complaints.decided.reversed}</td>
          </tr>
          <tr data-key="median">
            <td>Median time to decide</td>
            <td>${seconds(complaints.medianSecondsToDecide)}</td>
          </tr>
        </tbody>
      </table>
      <h3>Restrictions lifted</h3>
      ${bars('reversals', 'Restrictions lifted', [
        { key: 'after complaint', value: complaints.reversals.afterComplaint },
        { key: 'by a moderator', value: complaints.reversals.byModerator },
        { key: 'automatically', value: complaints.reversals.automatic },
      ])}
    </section>
    <section class="card automated">
      <h2>Automated means</h2>
      ${bars('automation', 'Restrictions by how automated the decision was', entries(auto.byAutomatedDecision))}
      <p>
        Accuracy from people's reviews of automated flags: <strong class="accuracy">${percent(auto.accuracy)}</strong>
        (${auto.reviews.confirmed} confirmed, ${auto.reviews.overturned} overturned of ${auto.reviews.reviewed}
        reviewed).
      </p>
    </section>`;
}

/** The window a page shows when none is asked for: this year (UTC) so far, today included. */
function defaultPeriod(now = Date.now()): { from: string; to: string } {
  const today = new Date(now).toISOString().slice(0, 10);
  return { from: `${today.slice(0, 4)}-01-01`, to: new Date(now + DAY_MS).toISOString().slice(0, 10) };
}

/** The query of a page: empty form fields mean "not set", and a field not set takes the default period's. */
function periodOf(ctx: Context): TransparencyReportQuery {
  const given = Object.fromEntries(
    Object.entries(ctx.query).filter(([, value]) => typeof value === 'string' && value !== ''),
  );
  return parseWith(TransparencyReportQuery, { ...defaultPeriod(), ...given }, 'query parameters');
}

/** The transparency report of a period with charts, and its CSV. */
export function transparencyReportPages({ router, deps }: ConsolePages): void {
  router.get('/transparency-report', async (ctx: Context) => {
    const period = periodOf(ctx);
    const report = await transparencyReportOf(deps.transparencyCounts, tenantOf(ctx), period);
    const query = `from=${period.from}&to=${period.to}`;
    render(
      ctx,
      'Transparency report',
      html`<section class="card">
          <p class="hint">
            The figures of the DSA's harmonised transparency report template that Vigil keeps, counted as decisions are
            made. The period runs from the first day to the day before the last (UTC).
          </p>
          <form method="get" action="/console/transparency-report" class="filters">
            <label>From <input type="date" name="from" value="${period.from}" /></label>
            <label>To (excluded) <input type="date" name="to" value="${period.to}" /></label>
            <button type="submit">Show</button>
            <a class="csv" href="/console/transparency-report/csv?${query}">Download CSV</a>
          </form>
        </section>
        ${sections(report)}`,
      '/console/transparency-report',
    );
  });

  router.get('/transparency-report/csv', async (ctx: Context) => {
    const period = periodOf(ctx);
    const report = await transparencyReportOf(deps.transparencyCounts, tenantOf(ctx), period);
    ctx.type = 'text/csv; charset=utf-8';
    ctx.attachment(csvFileName(period));
    ctx.body = transparencyCsv(report);
  });
}
