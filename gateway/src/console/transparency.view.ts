import type { TdbSettingsView, TdbSubmissionRecord } from '../store/tdb-store';
import { html, type Html } from './html';
import { dataTable, when } from './views';

/** Submissions listed on the page, newest first. */
export const SUBMISSIONS_SHOWN = 20;

/**
 * The Transparency Database section of the settings page: whether statements are submitted and where (set through
 * `PUT /api/v1/settings/transparency-database`, which takes the token), and the latest submissions with their state.
 */
export function transparencySection(view: TdbSettingsView, submissions: readonly TdbSubmissionRecord[]): Html {
  return html`<section class="card tdb">
    <h2>Transparency Database</h2>
    ${
      view.enabled
        ? html`<p class="tdb-status">
            Statements of reasons are submitted to <code>${view.baseUrl}</code> for ${view.territorialScope.join(', ')}
            (token ${view.token}).
          </p>`
        : html`<p class="tdb-status muted">
            Off. Turn it on with <code>PUT /api/v1/settings/transparency-database</code> (Art. 24(5) DSA).
          </p>`
    }
    ${
      submissions.length === 0
        ? null
        : dataTable(
            ['Statement', 'Subject', 'Status', 'Calls', 'Last error', 'Created'],
            submissions.map(
              (doc) =>
                html`<tr class="submission" data-status="${doc.state}">
                  <td><code>${doc.statementId}</code></td>
                  <td>${doc.subject.type} <code>${doc.subject.id}</code></td>
                  <td>${doc.state}${doc.alreadyStored ? ' (already stored)' : ''}</td>
                  <td>${doc.attemptCount}</td>
                  <td>${doc.state === 'submitted' ? '' : (doc.lastError ?? doc.skipReason ?? '')}</td>
                  <td>${when(doc.createdAt.toISOString())}</td>
                </tr>`,
            ),
            { className: 'tdb-submissions' },
          )
    }
  </section>`;
}
