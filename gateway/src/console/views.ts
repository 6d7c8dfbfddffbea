import { z } from 'zod';
import { ImageJudgement } from '@vigil/proto';
import { IMAGE_CLASSES } from '@vigil/proto/rules';
import { parseMetadata } from '../routes/shared/paging.schema';
import type { Html } from './html';
import { html, safeLink } from './html';

export interface Viewer {
  email: string;
  role: 'moderator' | 'admin';
  csrf: string;
}

const NAV: Array<{ href: string; label: string; admin?: boolean }> = [
  { href: '/console/records', label: 'Inbox' },
  { href: '/console/users', label: 'Users' },
  { href: '/console/appeals', label: 'Appeals' },
  { href: '/console/reports', label: 'Reports' },
  { href: '/console/policies', label: 'Policies' },
  { href: '/console/hash-banks', label: 'Hash banks' },
  { href: '/console/hash-quarantine', label: 'Quarantine' },
  { href: '/console/precision', label: 'Precision' },
  { href: '/console/transparency-report', label: 'Transparency' },
  { href: '/console/settings', label: 'Rules & settings', admin: true },
  { href: '/console/webhooks', label: 'Webhooks', admin: true },
];

export function csrfField(viewer: Viewer): Html {
  return html`<input type="hidden" name="_csrf" value="${viewer.csrf}" />`;
}

export function layout(title: string, viewer: Viewer | null, body: Html, current = ''): string {
  const nav = viewer
    ? html`<nav class="top">
        <span class="brand">Vigil</span>
        ${NAV.filter((item) => !item.admin || viewer.role === 'admin').map(
          (item) => html`<a href="${item.href}" class="${current === item.href ? 'current' : ''}">${item.label}</a>`,
        )}
        <form method="post" action="/console/sign-out" class="sign-out">
          ${csrfField(viewer)}<span class="who">${viewer.email} (${viewer.role})</span>
          <button type="submit">Sign out</button>
        </form>
      </nav>`
    : html`<nav class="top"><span class="brand">Vigil</span></nav>`;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · Vigil</title>
        <link rel="stylesheet" href="/console/assets/console.css" />
        <script src="/console/assets/console.js" defer></script>
      </head>
      <body>
        ${nav}
        <main>
          <h1>${title}</h1>
          ${body}
        </main>
      </body>
    </html>`.value;
}

/** What was refused and why, field by field: on an error page, or above a form shown again with what was sent. */
export function errorNotice(
  code: string,
  message: string,
  issues: ReadonlyArray<{ path: Array<string | number>; message: string }> = [],
  after: Html | null = null,
): Html {
  return html`<div class="error" data-code="${code}" role="alert">
    <p><strong>${code}</strong>: ${message}</p>
    ${
      issues.length > 0
        ? html`<ul>
            ${issues.map((i) => html`<li><code>${i.path.join('.') || '(input)'}</code> ${i.message}</li>`)}
          </ul>`
        : null
    }
    ${after}
  </div>`;
}

export function errorPage(
  viewer: Viewer | null,
  status: number,
  code: string,
  message: string,
  issues: Array<{ path: Array<string | number>; message: string }> = [],
): string {
  return layout(
    `Error ${status}`,
    viewer,
    errorNotice(code, message, issues, html`<p><a href="/console/records">Back to the inbox</a></p>`),
  );
}

/** A time as the console shows it: in UTC, and saying so (the date filters are UTC days too). */
export const when = (iso: string | null | undefined): Html =>
  iso
    ? html`<time datetime="${iso}">${iso.replace('T', ' ').slice(0, 19)} UTC</time>`
    : html`<span class="muted">–</span>`;

export const badge = (status: string | null | undefined): Html =>
  html`<span class="badge ${status ?? 'none'}">${status ?? 'pending'}</span>`;

export const links = (urls: string[]): Html =>
  urls.length === 0
    ? html`<span class="muted">none</span>`
    : html`<ul>
        ${urls.map((u) => html`<li>${safeLink(u)}</li>`)}
      </ul>`;

/** The columns of a shadow rule's counts, after its name (and version), on the precision and settings pages. */
export const SHADOW_COLUMNS = [
  'Judged',
  'Would flag',
  'Agrees with live',
  'Differs from live',
  'Agrees with people',
  'Differs from people',
];

/**
 * A table with one header row, `headings` in order ('' for a column without one), then `rows` as they are. `className`
 * styles it; `keyboardRows` lets the console's script move between its rows with the keyboard.
 */
export function dataTable(
  headings: readonly string[],
  rows: Html | readonly Html[],
  options: { className?: string; keyboardRows?: boolean } = {},
): Html {
  return html`<table${options.className ? html` class="${options.className}"` : null}${
    options.keyboardRows ? html` data-keyboard="rows"` : null
  }>
    <thead>
      <tr>
        ${headings.map((heading) => html`<th>${heading}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${rows}
    </tbody>
  </table>`;
}

export function metadataTable(metadata: Record<string, unknown>): Html {
  const entries = Object.entries(metadata);
  if (entries.length === 0) return html`<p class="muted">No metadata.</p>`;
  return html`<table class="kv">
    ${entries.map(
      ([key, value]) =>
        html`<tr>
          <th>${key}</th>
          <td><code>${JSON.stringify(value)}</code></td>
        </tr>`,
    )}
  </table>`;
}

function eventSummary(type: string, data: Record<string, unknown>): Html {
  const parts: Html[] = [];
  if (typeof data.status === 'string') parts.push(html`${badge(data.status)} `);
  if (typeof data.via === 'string') parts.push(html`<span class="via">via ${data.via}</span> `);
  if (typeof data.actor === 'string') parts.push(html`<span class="actor">by ${data.actor}</span> `);
  if (typeof data.ruleSetVersion === 'number') {
    parts.push(html`<span class="rule-set-version">rules v${String(data.ruleSetVersion)}</span> `);
  }
  if (typeof data.reason === 'string') parts.push(html`<q>${data.reason}</q> `);
  if (Array.isArray(data.reasons) && data.reasons.length > 0) {
    parts.push(html`<span>${(data.reasons as unknown[]).map(String).join('; ')}</span>`);
  }
  if (type === 'AppealCreated' && typeof data.text === 'string') parts.push(html`<q>${data.text}</q>`);
  return html`${parts}`;
}

/**
 * The image model's class scores of a moderation (its `images`), one row per image with the highest class in bold, or
 * why the image was not judged, and beside them the text read in it (an `image-text` strategy) or why none was; nothing
 * when the moderation looked at no image.
 */
export function imageScores(images: unknown): Html | null {
  const parsed = z.array(ImageJudgement).safeParse(images);
  if (!parsed.success || parsed.data.length === 0) return null;
  const read = parsed.data.some((image) => image.text !== undefined || image.textFailure !== undefined);
  const judged = parsed.data.some((image) => image.scores !== undefined || image.failure !== undefined);
  return html`<h3>Images</h3>
    <table class="image-scores">
      <thead>
        <tr>
          <th>Image</th>
          ${judged ? IMAGE_CLASSES.map((name) => html`<th>${name}</th>`) : null}
          ${read ? html`<th>Text read</th>` : null}
        </tr>
      </thead>
      <tbody>
        ${parsed.data.map((image) => {
          const text = read
            ? html`<td class="image-text">
                ${
                  image.text
                    ? html`<q>${image.text}</q>`
                    : html`<span class="muted">${image.textFailure ? `not read (${image.textFailure})` : 'none'}</span>`
                }
              </td>`
            : null;
          const scores = image.scores;
          if (!judged)
            return html`<tr class="image">
              <td>${image.position}</td>
              ${text}
            </tr>`;
          if (!scores) {
            return html`<tr class="image">
              <td>${image.position}</td>
              <td colspan="${IMAGE_CLASSES.length}" class="muted">not judged (${image.failure ?? 'not asked'})</td>
              ${text}
            </tr>`;
          }
          const top = Math.max(...IMAGE_CLASSES.map((name) => scores[name] ?? 0));
          return html`<tr class="image">
            <td>${image.position}</td>
            ${IMAGE_CLASSES.map((name) => {
              const score = scores[name];
              if (score === undefined) return html`<td class="muted">–</td>`;
              return score === top
                ? html`<td><strong>${score.toFixed(2)}</strong></td>`
                : html`<td>${score.toFixed(2)}</td>`;
            })}
            ${text}
          </tr>`;
        })}
      </tbody>
    </table>`;
}

/** A record's or user's events, in the order the moderator returned them. */
export function historyTable(events: Array<{ type: string; occurredAt: string; dataJson: string }>): Html {
  return dataTable(
    ['When', 'Event', 'Detail'],
    events.map(
      (event) =>
        html`<tr class="event ${event.type}">
          <td>${when(event.occurredAt)}</td>
          <td>${event.type}</td>
          <td>${eventSummary(event.type, parseMetadata(event.dataJson))}</td>
        </tr>`,
    ),
    { className: 'history' },
  );
}
