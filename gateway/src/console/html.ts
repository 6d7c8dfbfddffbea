/**
 * Server-rendered HTML with escaping by default: every value interpolated into `html` is escaped unless it is itself
 * `Html` (the result of `html` or `raw`). Pages carry no inline script or style, so the Content-Security-Policy can
 * forbid both.
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);

type Value = Html | string | number | boolean | null | undefined | readonly Value[];

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return (value as readonly Value[]).map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, index) => {
    out += render(value) + (strings[index + 1] ?? '');
  });
  return new Html(out);
}

/** Only for markup built here, never for input. */
export const raw = (markup: string): Html => new Html(markup);

/** A link to a URL from a record, only when it is http(s): `javascript:` and friends stay text. */
export function safeLink(url: string): Html {
  try {
    const parsed = new URL(url);
    if (parsed.protocol === 'http:' || parsed.protocol === 'https:') {
      return html`<a href="${parsed.href}" rel="noopener noreferrer nofollow" target="_blank">${url}</a>`;
    }
  } catch {
    // not a URL: shown as text
  }
  return html`<span>${url}</span>`;
}
