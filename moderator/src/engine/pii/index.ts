import { PII_CATEGORIES, type PiiCategory, type Strategy } from '@vigil/proto/rules';
import type { CountryCode } from 'libphonenumber-js/max';
import type { LocalCheck } from '../strategies';
import { DEFAULT_REGIONS, detectPii, type PiiMatch } from './detect';

export { detectPii, DEFAULT_REGIONS, type PiiMatch } from './detect';

/** What replaces each detail a masking strategy hides. */
export const PII_MASK = '[contact removed]';

/** Reasons one strategy reports at most (the mask covers every match). */
const MAX_PII_REASONS = 20;

/** The reason of one match: category and span, never the matched text. */
export function piiReason(match: PiiMatch): string {
  const what = match.category === 'asking' ? 'Content asks for contact details' : 'Content contains contact details';
  return `${what} (${match.category}): ${match.start}-${match.end}`;
}

/**
 * The `pii` strategy: reads the record's text (not its name or metadata, so that every span points into one string).
 * With `mask`, the spans of details given (every category but `asking`) are handed to the content to hide.
 */
export function compilePii(strategy: Extract<Strategy, { type: 'pii' }>): LocalCheck {
  const categories = new Set<PiiCategory>(strategy.categories ?? PII_CATEGORIES);
  const regions = (strategy.regions?.length ? strategy.regions : DEFAULT_REGIONS) as readonly CountryCode[];
  const mask = strategy.mask ?? false;
  return (content) => {
    if (!content.text) return [];
    const matches = detectPii(content.text, { categories, regions });
    if (mask) content.hide(matches.filter((match) => match.category !== 'asking'));
    return matches.slice(0, MAX_PII_REASONS).map(piiReason);
  };
}

/** `text` with each span replaced by PII_MASK; overlapping or touching spans are hidden as one. */
export function maskText(text: string, spans: readonly { start: number; end: number }[]): string {
  const ordered = [...spans].sort((a, b) => a.start - b.start);
  let out = '';
  let at = 0;
  for (const span of ordered) {
    if (span.end <= at) continue;
    if (span.start >= at) {
      out += text.slice(at, span.start) + PII_MASK;
    }
    at = span.end;
  }
  return out + text.slice(at);
}
