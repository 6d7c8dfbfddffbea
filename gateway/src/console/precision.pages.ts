import type { Context } from 'koa';
import { parseWith } from '../http/validate';
import { PrecisionQuery, type PrecisionReport } from '../routes/precision/precision.schema';
import { precisionOf } from '../use-cases/get-precision-report';
import { html, type Html } from './html';
import { render, tenantOf, type ConsolePages } from './page';
import { dataTable, SHADOW_COLUMNS } from './views';

const WIDTH = 720;
const HEIGHT = 220;
const PAD = { left: 44, right: 44, top: 16, bottom: 28 };
const DAY_MS = 86_400_000;

const percent = (rate: number | null): string => (rate === null ? '–' : `${Math.round(rate * 1000) / 10} %`);

/** Every day of the window, oldest first (at most 92). */
function daysOf(from: string, to: string): string[] {
  const days: string[] = [];
  for (let at = Date.parse(from); at <= Date.parse(to); at += DAY_MS)
    days.push(new Date(at).toISOString().slice(0, 10));
  return days;
}

/**
 * The chart: bars of flags and of reviewed flags per day (left scale, counts) and precision as a line over the days
 * with reviews (0–100 %). Plain SVG drawn here: no script, and nothing a content security policy would block.
 */
function chart(report: PrecisionReport): Html {
  const days = daysOf(report.from, report.to);
  const byDay = new Map(report.series.map((point) => [point.day, point]));
  const maxFlags = Math.max(1, ...report.series.map((point) => point.flags));
  const plotWidth = WIDTH - PAD.left - PAD.right;
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const step = plotWidth / days.length;
  const x = (index: number) => PAD.left + index * step;
  const yCount = (count: number) => PAD.top + plotHeight * (1 - count / maxFlags);
  const yRate = (rate: number) => PAD.top + plotHeight * (1 - rate);
  const bars = days.map((day, index) => {
    const point = byDay.get(day);
    if (!point) return null;
    const width = Math.max(1, step * 0.4);
    return html`<g
      class="day"
      data-day="${day}"
      data-flags="${point.flags}"
      data-reviewed="${point.reviewed}"
      data-precision="${point.precision === null ? '' : String(point.precision)}"
    >
      <title>${day}: ${point.flags} flags, ${point.reviewed} reviewed, precision ${percent(point.precision)}</title>
      <rect
        x="${x(index) + step * 0.1}"
        y="${yCount(point.flags)}"
        width="${width}"
        height="${PAD.top + plotHeight - yCount(point.flags)}"
        fill="#9aa5b1"
      />
      <rect
        x="${x(index) + step * 0.5}"
        y="${yCount(point.reviewed)}"
        width="${width}"
        height="${PAD.top + plotHeight - yCount(point.reviewed)}"
        fill="#3e4c59"
      />
    </g>`;
  });
  const line = days
    .map((day, index) => ({ point: byDay.get(day), index }))
    .filter(({ point }) => point?.precision !== null && point?.precision !== undefined)
    .map(({ point, index }) => `${(x(index) + step / 2).toFixed(1)},${yRate(point!.precision!).toFixed(1)}`);
  const dots = days
    .map((day, index) => ({ point: byDay.get(day), index }))
    .filter(({ point }) => point?.precision !== null && point?.precision !== undefined)
    .map(
      ({ point, index }) =>
        html`<circle cx="${x(index) + step / 2}" cy="${yRate(point!.precision!)}" r="3" fill="#c2410c" />`,
    );
  const labels = [0, Math.floor((days.length - 1) / 2), days.length - 1].filter(
    (index, position, all) => all.indexOf(index) === position,
  );
  const last = days.length - 1;
  const anchorOf = (index: number) => (index === 0 ? 'start' : index === last ? 'end' : 'middle');
  const labelX = (index: number) => (index === 0 ? x(0) : index === last ? x(index) + step : x(index) + step / 2);
  const bottom = PAD.top + plotHeight;
  const right = WIDTH - PAD.right;
  return html`<svg
    class="precision-chart"
    viewBox="0 0 ${WIDTH} ${HEIGHT}"
    width="${WIDTH}"
    height="${HEIGHT}"
    role="img"
    aria-label="Flags, reviewed flags and precision per day"
  >
    <line x1="${PAD.left}" y1="${bottom}" x2="${right}" y2="${bottom}" stroke="#52606d" />
    <text x="${PAD.left - 4}" y="${PAD.top + 4}" text-anchor="end" font-size="11">${maxFlags}</text>
    <text x="${PAD.left - 4}" y="${bottom}" text-anchor="end" font-size="11">0</text>
    <text x="${right + 4}" y="${PAD.top + 4}" font-size="11" fill="#c2410c">100 %</text>
    <text x="${right + 4}" y="${bottom}" font-size="11" fill="#c2410c">0 %</text>
    ${bars}
    ${
      line.length > 1
        ? html`<polyline
            class="precision-line"
            points="${line.join(' ')}"
            fill="none"
            stroke="#c2410c"
            stroke-width="2"
          />`
        : null
    }
    ${dots}
    ${labels.map(
      (index) =>
        html`<text x="${labelX(index)}" y="${HEIGHT - 8}" text-anchor="${anchorOf(index)}" font-size="11"
          >${days[index]}</text
        >`,
    )}
  </svg>`;
}

const countCells = (row: PrecisionReport['rules'][number] | PrecisionReport['presets'][number]): Html =>
  html`<td>${row.flags}</td>
    <td>${row.reviewed}</td>
    <td>${row.confirmed}</td>
    <td>${row.overturned}</td>
    <td class="precision">${percent(row.precision)}</td>
    <td>${percent(row.overturnRate)}</td>`;

/** Each rule's precision from the tenant's human decisions, over a window, with a chart per day. */
export function precisionPages({ router, deps }: ConsolePages): void {
  router.get('/precision', async (ctx: Context) => {
    // Empty form fields mean "not set".
    const given = Object.fromEntries(
      Object.entries(ctx.query).filter(([, value]) => typeof value === 'string' && value !== ''),
    );
    const q = parseWith(PrecisionQuery, given, 'query parameters');
    const report = await precisionOf(deps.rulePrecision, tenantOf(ctx), q);
    const ruleIds = [...new Set(report.rules.map((row) => row.ruleId))].sort();
    if (q.rule && !ruleIds.includes(q.rule)) ruleIds.unshift(q.rule);
    render(
      ctx,
      'Rule precision',
      html`<section class="card">
          <p class="hint">
            How often people kept (confirmed) or undid (overturned) each rule's flags: decisions on records, on users
            the rule's flag suspended, and on their appeals. Precision is confirmed ÷ reviewed.
          </p>
          <form method="get" action="/console/precision" class="filters">
            <label>From <input type="date" name="from" value="${report.from}" /></label>
            <label>To <input type="date" name="to" value="${report.to}" /></label>
            <label
              >Rule
              <select name="rule">
                <option value="">All rules</option>
                ${ruleIds.map(
                  (id) => html`<option value="${id}" ${q.rule === id ? html`selected` : null}>${id}</option>`,
                )}
              </select></label
            >
            <label
              >Version
              <input type="number" name="version" min="0" value="${q.version === undefined ? '' : String(q.version)}"
            /></label>
            <button type="submit">Show</button>
          </form>
        </section>
        <section class="card">
          <h2>Per day</h2>
          ${
            report.series.length === 0
              ? html`<p class="muted no-data">No flags in this window.</p>`
              : html`${chart(report)}
                  <p class="hint">
                    Light bars: flags. Dark bars: reviewed flags. Dots and line: precision (right scale).
                  </p>`
          }
        </section>
        <section class="card">
          <h2>Per rule and version</h2>
          ${dataTable(
            ['Rule', 'Version', 'Flags', 'Reviewed', 'Confirmed', 'Overturned', 'Precision', 'Overturn rate'],
            report.rules.map(
              (row) =>
                html`<tr data-rule="${row.ruleId}" data-version="${row.ruleSetVersion}">
                  <td>${row.ruleId}${row.name ? html` <span class="muted">${row.name}</span>` : null}</td>
                  <td>${row.ruleSetVersion === 0 ? 'default' : `v${row.ruleSetVersion}`}</td>
                  ${countCells(row)}
                </tr>`,
            ),
            { className: 'precision-rules' },
          )}
          ${report.truncated ? html`<p class="hint">Only the 500 rows with the most flags are shown.</p>` : null}
        </section>
        ${
          report.shadow.length === 0
            ? null
            : html`<section class="card">
                <h2>Shadow rules</h2>
                <p class="hint">
                  They run beside the live rules without acting. Agreement with live results and people.
                </p>
                ${dataTable(
                  ['Rule', 'Version', ...SHADOW_COLUMNS],
                  report.shadow.map(
                    (row) =>
                      html`<tr data-rule="${row.ruleId}">
                        <td>${row.ruleId}</td>
                        <td>${row.ruleSetVersion === 0 ? 'default' : `v${row.ruleSetVersion}`}</td>
                        <td>${row.runs}</td>
                        <td>${row.wouldFlag}</td>
                        <td>${row.agreeLive}</td>
                        <td>${row.disagreeLive}</td>
                        <td>${row.agreeHuman}</td>
                        <td>${row.disagreeHuman}</td>
                      </tr>`,
                  ),
                  { className: 'precision-shadow' },
                )}
              </section>`
        }
        ${
          report.presets.length === 0
            ? null
            : html`<section class="card">
                <h2>Prompt rules per preset</h2>
                <table class="precision-presets">
                  <tbody>
                    ${report.presets.map(
                      (row) =>
                        html`<tr>
                          <td>${row.presetId}</td>
                          <td>v${row.ruleSetVersion}</td>
                          ${countCells(row)}
                        </tr>`,
                    )}
                  </tbody>
                </table>
              </section>`
        }`,
      '/console/precision',
    );
  });
}
