import type { Strategy } from '@vigil/proto/rules';
import { PII_CATEGORIES, type PiiCategory } from '@vigil/proto/rules/pattern';
import type { CountryCode } from 'libphonenumber-js/max';
import type { LocalCheck } from '../strategies';
import type * as Detector from './detect';
import type { DetectOptions, PiiMatch } from './detect';

export type { PiiMatch } from './detect';

export const DEFAULT_REGIONS: readonly CountryCode[] = ['US', 'GB', 'CA', 'AU', 'IN'];

let detector: typeof Detector | undefined;

/**
 * The detector, loaded by the first `pii` strategy compiled (or the first `detectPii`): libphonenumber's metadata and
 * the detector's expressions cost about 9 MB in each thread that loads them (the moderator's and each engine
 * thread), and the default rule set and most tenants' have no `pii` strategy.
 */
function loadDetector(): typeof Detector {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  detector ??= require('./detect') as typeof Detector;
  return detector;
}

/** Every contact detail (or request for one) in `text`: see `./detect`. */
export function detectPii(text: string, options: DetectOptions): PiiMatch[] {
  return loadDetector().detectPii(text, options);
}

/** What replaces each detail a masking strategy hides. */
export const PII_MASK = '[contact removed]';

/** Reasons one strategy reports at most (the mask covers every match). */
export const MAX_PII_REASONS = 20;

/** Where a match was found: the record's text, its name, or a string of its metadata. */
type Field = 'Content' | 'Name' | 'Metadata';

/**
 * The reason of one match: field, category and span (in that field; none for metadata, whose strings are read without
 * their keys), never the matched text.
 */
export function piiReason(match: PiiMatch, field: Field = 'Content'): string {
  const what = `${field} ${match.category === 'asking' ? 'asks for' : 'contains'} contact details (${match.category})`;
  return field === 'Metadata' ? what : `${what}: ${match.start}-${match.end}`;
}

/**
 * The `pii` strategy: reads the record's text, then its name and every string of its metadata, as the other text
 * rules do; each reason names its field, and spans point into that field. With `mask`, the spans of details given in
 * the text (every category but `asking`) are handed to the content to hide: the masked copy is of the text alone.
 */
export function compilePii(strategy: Extract<Strategy, { type: 'pii' }>): LocalCheck {
  const categories = new Set<PiiCategory>(strategy.categories ?? PII_CATEGORIES);
  const regions = (strategy.regions?.length ? strategy.regions : DEFAULT_REGIONS) as readonly CountryCode[];
  const mask = strategy.mask ?? false;
  const { detectPii } = loadDetector();
  return (content) => {
    const reasons: string[] = [];
    const read = (text: string, field: Field): void => {
      if (!text || reasons.length >= MAX_PII_REASONS) return;
      const matches = detectPii(text, { categories, regions });
      for (const match of matches.slice(0, MAX_PII_REASONS - reasons.length)) reasons.push(piiReason(match, field));
    };
    const inText = content.text ? detectPii(content.text, { categories, regions }) : [];
    if (mask) content.hide(inText.filter((match) => match.category !== 'asking'));
    for (const match of inText.slice(0, MAX_PII_REASONS)) reasons.push(piiReason(match));
    read(content.name, 'Name');
    for (const text of content.metadataStrings) read(text, 'Metadata');
    return reasons;
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
