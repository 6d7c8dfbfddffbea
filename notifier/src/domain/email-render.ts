import type { EmailPlaceholder, EmailTemplate } from '@vigil/proto';

export type PlaceholderValues = Partial<Record<EmailPlaceholder, string>>;

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;

const escapeHtml = (value: string): string =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Substitutes placeholders in one pass, so a value that itself looks like `{{x}}` is never expanded again. */
function fill(text: string, values: PlaceholderValues, escape: (value: string) => string): string {
  return text.replace(PLACEHOLDER, (_match, name: string) => escape(values[name as EmailPlaceholder] ?? ''));
}

/** Folds every run of whitespace (line breaks included) into one space: a subject is a single header line. */
const oneLine = (value: string): string => value.replace(/\s+/g, ' ').trim();

/**
 * Renders a template to a subject, a plain-text part and an HTML part. The tenant's text is plain text, not markup:
 * in the HTML part both it and the placeholder values are escaped, so neither a template nor a username can inject
 * markup or links. `appealUrl`, when given, also adds an appeal link after the body (as Iffy's Appeal button) unless
 * the template already places it.
 */
export function renderEmail(
  template: EmailTemplate,
  values: PlaceholderValues,
  /** The statement of reasons, as plain lines, after the body under its own heading. */
  statement: readonly string[] = [],
  /**
   * `outcome`: a report's decision as plain lines, after the body (a reporter's email). `link`: the words of the added
   * link, when it is not an appeal (a reporter's complaint).
   */
  extra: { outcome?: readonly string[]; link?: { text: string; label: string } } = {},
): RenderedEmail {
  const link = extra.link ?? { text: 'To appeal this decision, visit:', label: 'Appeal this decision' };
  const outcome = extra.outcome ?? [];
  const appealUrl = values.appealUrl;
  const placesLink = /\{\{\s*appealUrl\s*\}\}/.test(template.body);
  const paragraphs = template.body
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter(Boolean);
  const subject = oneLine(fill(template.subject, values, (v) => v));
  const heading = oneLine(fill(template.heading, values, (v) => v));

  const textParts = [heading, ...paragraphs.map((p) => fill(p, values, (v) => v))];
  if (outcome.length > 0) textParts.push(outcome.join('\n'));
  if (statement.length > 0) textParts.push(['Statement of reasons', ...statement].join('\n'));
  if (appealUrl && !placesLink) textParts.push(`${link.text} ${appealUrl}`);

  const htmlParts = [`<h1>${escapeHtml(heading)}</h1>`];
  for (const p of paragraphs) {
    // Placeholder names hold no character escapeHtml changes, so they survive escaping and are filled after it.
    const lines = p.split('\n').map((line) => fill(escapeHtml(line), values, escapeHtml));
    htmlParts.push(`<p>${lines.join('<br>')}</p>`);
  }
  if (outcome.length > 0) htmlParts.push(outcome.map((line) => `<p>${escapeHtml(line)}</p>`).join(''));
  if (statement.length > 0) {
    htmlParts.push(`<h2>Statement of reasons</h2>${statement.map((line) => `<p>${escapeHtml(line)}</p>`).join('')}`);
  }
  if (appealUrl && !placesLink) {
    htmlParts.push(`<p><a href="${escapeHtml(appealUrl)}">${escapeHtml(link.label)}</a></p>`);
  }
  return {
    subject,
    text: textParts.join('\n\n') + '\n',
    html: `<!doctype html><html><body>${htmlParts.join('')}</body></html>`,
  };
}
