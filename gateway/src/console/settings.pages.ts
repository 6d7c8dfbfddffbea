import type { Context } from 'koa';
import { LIMITS, RULE_SET_BUDGET } from '@vigil/proto';
import { AppError, NotFoundError, ValidationError } from '../errors';
import { toHttpError } from '../http/error-handler';
import { parseJson } from '../http/json-body';
import { parseWith } from '../http/validate';
import { versionParam } from '../http/params';
import { RulesBody, RuleSetChangeBody, SettingsPatchBody } from '../routes/rules/rules.schema';
import { html, type Html } from './html';
import type { PrecisionReport } from '../routes/precision/precision.schema';
import { precisionOf } from '../use-cases/get-precision-report';
import { refuseUnjudgeable } from '../use-cases/rule-checks';
import { promoteVersion } from '../use-cases/promote-version';
import { putRules } from '../use-cases/put-rules';
import { rollBackVersion } from '../use-cases/roll-back-version';
import { saveDraft } from '../use-cases/save-draft';
import { setShadowVersion } from '../use-cases/set-shadow-version';
import type { Strategy } from '@vigil/proto/rules';
import { actorOf, csrfOf, render, tenantOf, type ConsolePages } from './page';
import { dataTable, errorNotice, SHADOW_COLUMNS, when } from './views';
import { SUBMISSIONS_SHOWN, transparencySection } from './transparency.view';
import { formOf } from './security';

/** Each strategy type of a rule set, with a word on what it reads when its name does not say (the type forbids gaps). */
const STRATEGY_NOTES: Record<Strategy['type'], string> = {
  blocklist: '',
  patterns: '',
  links: '',
  pii: 'contact details',
  'openai-moderation': '',
  prompt: '',
  images: 'the bundled image model',
  'image-text': 'text read in images',
};
const STRATEGY_LIST = Object.entries(STRATEGY_NOTES);

/** The shadow version's counters per rule (docs/rules-safely.md, "Shadow versions"). */
function shadowCard(version: number, rows: PrecisionReport['shadow']): Html {
  return html`<section class="card shadow-version">
    <h2>Shadow version v${version}</h2>
    <p class="hint">
      It runs on live traffic beside the live rules, without acting: only its word, pattern and link checks, within a
      bound per tenant. Counts of the last 30 days.
    </p>
    ${
      rows.length === 0
        ? html`<p class="muted">Nothing judged yet.</p>`
        : dataTable(
            ['Rule', ...SHADOW_COLUMNS],
            rows.map(
              (row) =>
                html`<tr data-rule="${row.ruleId}">
                  <td>${row.ruleId}</td>
                  <td class="runs">${row.runs}</td>
                  <td class="would-flag">${row.wouldFlag}</td>
                  <td class="agree-live">${row.agreeLive}</td>
                  <td class="disagree-live">${row.disagreeLive}</td>
                  <td class="agree-human">${row.agreeHuman}</td>
                  <td class="disagree-human">${row.disagreeHuman}</td>
                </tr>`,
            ),
            { className: 'shadow-counts' },
          )
    }
  </section>`;
}

/** Rule set versions listed on the page, newest first. */
const VERSIONS_SHOWN = 20;

/** The tenant's settings, rule set and its versions (admins). */
export function settingsPages({ router, deps, change, adminOnly }: ConsolePages): void {
  /** The page; `draft`: a rule set refused as written, shown again in the editor with what was wrong. */
  const show = async (ctx: Context, draft?: { text: string; error: AppError }): Promise<void> => {
    const [live, current, versions, tdb, submissions, shadowVersion] = await Promise.all([
      deps.configStore.getRules(tenantOf(ctx)),
      deps.configStore.getSettings(tenantOf(ctx)),
      deps.configStore.ruleVersions.list(tenantOf(ctx), VERSIONS_SHOWN),
      deps.tdb.view(tenantOf(ctx)),
      deps.tdb.list(tenantOf(ctx), SUBMISSIONS_SHOWN),
      deps.configStore.shadowVersion(tenantOf(ctx)),
    ]);
    // The shadow version's counters over the default window (the precision page shows any window).
    const shadowRows =
      shadowVersion === null
        ? []
        : (await precisionOf(deps.rulePrecision, tenantOf(ctx), { version: shadowVersion })).shadow;
    const issues = draft?.error instanceof ValidationError ? draft.error.issues : [];
    render(
      ctx,
      'Rules & settings',
      html`<section class="card">
          <h2>Settings</h2>
          <form method="post" action="/console/settings" class="decision">
            ${csrfOf(ctx)}
            <label class="check"
              ><input type="checkbox" name="testMode" value="true" ${current.testMode ? html`checked` : null} /> Test
              mode (results stored, no webhooks, no suspensions)</label
            >
            <label
              >Suspension threshold (flagged records)
              <input type="number" name="suspensionThreshold" min="1" value="${current.suspensionThreshold}"
            /></label>
            <label
              >Degraded rule: overturn rate, % (empty: never)
              <input
                type="number"
                name="ruleDegradedPercent"
                min="0"
                max="100"
                step="any"
                value="${current.ruleDegradedOverturnRate === null ? '' : String(current.ruleDegradedOverturnRate * 100)}"
            /></label>
            <label
              >Degraded rule: reviews needed
              <input type="number" name="ruleDegradedMinReviews" min="1" value="${current.ruleDegradedMinReviews}"
            /></label>
            <button type="submit">Save settings</button>
          </form>
        </section>
        ${transparencySection(tdb, submissions?.docs ?? [])}
        <section class="card">
          <h2>Rule set</h2>
          <p class="hint">The same JSON as <code>PUT /api/v1/rules</code>, checked the same way.</p>
          <p class="hint">
            Strategies:
            ${STRATEGY_LIST.map(
              ([type, what], index) =>
                html`${index === 0 ? '' : index === STRATEGY_LIST.length - 1 ? ' and ' : ', '}<code>${type}</code>${
                  what ? ` (${what})` : ''
                }`,
            )}.
            The whole set's budget: ${RULE_SET_BUDGET.strategies} strategies, ${RULE_SET_BUDGET.words} blocklist words,
            ${RULE_SET_BUDGET.patterns} patterns compiling to ${RULE_SET_BUDGET.patternInstructions} RE2 instructions,
            ${RULE_SET_BUDGET.domains} domains and ${RULE_SET_BUDGET.prompts} prompt strategies in all.
          </p>
          ${
            draft
              ? errorNotice(
                  draft.error.code,
                  `${draft.error.message}: the rule set below is as you sent it, not saved`,
                  issues,
                )
              : null
          }
          <p>
            Live version: <strong class="live-version">${live.version === 0 ? 'default' : `v${live.version}`}</strong>
          </p>
          <form method="post" action="/console/rules">
            ${csrfOf(ctx)}
            <textarea name="rules" rows="24" class="code" spellcheck="false">
${draft ? draft.text : JSON.stringify({ rules: live.rules }, null, 2)}</textarea>
            <label>Note <input type="text" name="note" maxlength="${LIMITS.ruleVersionNote}" /></label>
            <button type="submit" name="as" value="live">Save rules</button>
            <button type="submit" name="as" value="draft">Save as draft</button>
          </form>
        </section>
        <section class="card">
          <h2>Versions</h2>
          ${
            versions.docs.length === 0
              ? html`<p class="muted">No version written yet: the default rule set judges.</p>`
              : dataTable(
                  ['Version', 'Kind', 'Author', 'Note', 'Written', ''],
                  versions.docs.map(
                    (doc) =>
                      html`<tr class="version" data-version="${doc.version}">
                        <td>
                          v${doc.version}${doc.version === live.version ? html` <strong>live</strong>` : null}${
                            doc.version === shadowVersion ? html` <strong class="shadow-mark">shadow</strong>` : null
                          }
                          ${doc.basedOn !== undefined ? html`<span class="muted">(from v${doc.basedOn})</span>` : null}
                        </td>
                        <td>${doc.kind}</td>
                        <td>${doc.author}</td>
                        <td>${doc.note ?? ''}</td>
                        <td>${when(doc.createdAt.toISOString())}</td>
                        <td>
                          ${
                            doc.version === live.version
                              ? null
                              : html`<form
                                  method="post"
                                  action="/console/rules/versions/${doc.version}/${
                                    doc.kind === 'draft' ? 'promote' : 'rollback'
                                  }"
                                >
                                  ${csrfOf(ctx)}
                                  <button type="submit">${doc.kind === 'draft' ? 'Promote' : 'Roll back to it'}</button>
                                </form>`
                          }
                          ${
                            doc.version === live.version
                              ? null
                              : html`<form
                                  method="post"
                                  action="/console/rules/versions/${doc.version}/${
                                    doc.version === shadowVersion ? 'unshadow' : 'shadow'
                                  }"
                                >
                                  ${csrfOf(ctx)}
                                  <button type="submit" class="shadow-toggle">
                                    ${doc.version === shadowVersion ? 'Stop shadow' : 'Run in shadow'}
                                  </button>
                                </form>`
                          }
                          ${
                            doc.kind === 'draft'
                              ? html`<form method="post" action="/console/backtests">
                                  ${csrfOf(ctx)}
                                  <input type="hidden" name="version" value="${doc.version}" />
                                  <button type="submit">Backtest this draft</button>
                                </form>`
                              : null
                          }
                        </td>
                      </tr>`,
                  ),
                  { className: 'rule-versions' },
                )
          }
        </section>
        ${shadowVersion === null ? null : shadowCard(shadowVersion, shadowRows)}`,
      '/console/settings',
    );
  };

  router.get('/settings', adminOnly, (ctx) => show(ctx));

  router.post('/settings', adminOnly, ...change, async (ctx) => {
    const f = formOf(ctx);
    const patch = parseWith(
      SettingsPatchBody,
      {
        testMode: f.testMode === 'true',
        ...(f.suspensionThreshold !== undefined && f.suspensionThreshold !== ''
          ? { suspensionThreshold: Number(f.suspensionThreshold) }
          : {}),
        // rule.degraded (docs/rules-safely.md): a percentage here, a rate in the API; empty turns it off.
        ...(f.ruleDegradedPercent !== undefined
          ? { ruleDegradedOverturnRate: f.ruleDegradedPercent === '' ? null : Number(f.ruleDegradedPercent) / 100 }
          : {}),
        ...(f.ruleDegradedMinReviews !== undefined && f.ruleDegradedMinReviews !== ''
          ? { ruleDegradedMinReviews: Number(f.ruleDegradedMinReviews) }
          : {}),
      },
      'settings form',
    );
    await deps.configStore.patchSettings(tenantOf(ctx), patch);
    ctx.redirect('/console/settings');
  });

  router.post('/rules', adminOnly, ...change, async (ctx) => {
    const text = formOf(ctx).rules ?? '';
    try {
      // The same strictness as PUT /api/v1/rules: bounded nesting, no repeated key, no lone surrogate or NUL.
      const json = parseJson(text, 'the rule set');
      const ruleSet = parseWith(RulesBody, json, 'rule set');
      // Nor prompt strategies where no LLM would ever judge them.
      refuseUnjudgeable(deps, ruleSet);
      const note = parseWith(RuleSetChangeBody.shape.note, formOf(ctx).note?.trim() || undefined, 'note');
      const write = { author: actorOf(ctx), ...(note !== undefined ? { note } : {}) };
      if (formOf(ctx).as === 'draft') await saveDraft(deps, tenantOf(ctx), ruleSet, write);
      else await putRules(deps, tenantOf(ctx), ruleSet, write);
    } catch (err) {
      // A rule set refused as written: the editor again, with the text sent and what was wrong (not a page without it).
      if (!(err instanceof AppError) || toHttpError(err).status !== 400) throw err;
      ctx.status = 400;
      await show(ctx, { text, error: err });
      return;
    }
    ctx.redirect('/console/settings');
  });

  router.post('/rules/versions/:version/:action', adminOnly, ...change, async (ctx) => {
    const { action } = ctx.params;
    const version = versionParam(ctx);
    const tenantId = tenantOf(ctx);
    if (action === 'promote') await promoteVersion(deps, tenantId, version);
    else if (action === 'shadow') await setShadowVersion(deps, tenantId, version);
    else if (action === 'unshadow') await setShadowVersion(deps, tenantId, null);
    else if (action === 'rollback') await rollBackVersion(deps, tenantId, version, { author: actorOf(ctx) });
    else throw new NotFoundError('not found');
    ctx.redirect('/console/settings');
  });
}
