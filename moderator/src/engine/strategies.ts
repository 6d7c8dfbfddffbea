import { compilePattern, type Strategy } from '@vigil/proto';
import { hostOf, type Content } from './content';
import { profaneWords } from './profanity';

type Of<T extends Strategy['type']> = Extract<Strategy, { type: T }>;

/** A strategy that runs in process: returns one reason per match, none when the content passes. */
export type LocalCheck = (content: Content) => string[];

/** Letters, digits, marks and `_` make a word; `\b` alone is ASCII-only and misses "café" or "c++". */
const NOT_AFTER_WORD = '(?<![\\p{L}\\p{M}\\p{N}_])';
const NOT_BEFORE_WORD = '(?![\\p{L}\\p{M}\\p{N}_])';

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
}

/** A tenant word or phrase as regex source: literal, any run of whitespace inside a phrase matches any other. */
export function wordSource(word: string, wholeWord: boolean): string {
  const literal = word.trim().split(/\s+/u).map(escapeRegExp).join('\\s+');
  return wholeWord ? `${NOT_AFTER_WORD}${literal}${NOT_BEFORE_WORD}` : literal;
}

export function compileBlocklist(strategy: Of<'blocklist'>): LocalCheck {
  const wholeWord = strategy.wholeWord ?? false;
  const seen = new Set<string>();
  const words: { word: string; regex: RegExp }[] = [];
  for (const raw of strategy.words ?? []) {
    const word = raw.trim();
    if (!word || seen.has(word.toLowerCase())) continue;
    seen.add(word.toLowerCase());
    words.push({ word, regex: new RegExp(wordSource(word, wholeWord), 'iu') });
  }
  // One alternation over every word rejects clean content in a single pass; only a hit pays for the per-word scan.
  // The word boundaries sit outside the alternation so that the engine tests them once per position, not per word.
  const alternation = `(?:${words.map(({ word }) => wordSource(word, false)).join('|')})`;
  const anyWord =
    words.length > 0
      ? new RegExp(wholeWord ? `${NOT_AFTER_WORD}${alternation}${NOT_BEFORE_WORD}` : alternation, 'iu')
      : undefined;
  const profanity = strategy.profanity ?? false;

  return (content) => {
    const reasons: string[] = [];
    if (anyWord && content.fields.some((field) => anyWord.test(field))) {
      for (const { word, regex } of words) {
        if (content.fields.some((field) => regex.test(field))) reasons.push(`Content contains blocked word: ${word}`);
      }
    }
    if (profanity) {
      for (const word of profaneWords(content.fields)) reasons.push(`Content contains blocked word: ${word}`);
    }
    return reasons;
  };
}

/** Tenant patterns run on RE2 (see compilePattern): linear in the field's length, whatever the pattern. */
export function compilePatterns(strategy: Of<'patterns'>): LocalCheck {
  const patterns: { source: string; regex: ReturnType<typeof compilePattern> }[] = [];
  for (const source of strategy.patterns) {
    try {
      patterns.push({ source, regex: compilePattern(source) });
    } catch {
      // The RuleSet schema refuses such patterns; one stored before that check cannot match anything.
    }
  }
  return (content) =>
    patterns
      .filter(({ regex }) => content.forPatterns.some((field) => regex.test(field)))
      .map(({ source }) => `Content matches pattern: ${source}`);
}

/** A configured domain as a host name ("https://Shop.Example.com/x", "*.example.com." → "shop.example.com"). */
export function normaliseDomain(domain: string): string | undefined {
  const bare = domain.trim().replace(/^\*?\.+/, '');
  if (!bare) return undefined;
  return hostOf(/^https?:\/\//i.test(bare) ? bare : `http://${bare}`);
}

/** The first of `domains` that `host` equals or is a subdomain of. */
function matchingDomain(host: string, domains: ReadonlySet<string>): string | undefined {
  for (let suffix: string | undefined = host; suffix;) {
    if (domains.has(suffix)) return suffix;
    const dot = suffix.indexOf('.');
    suffix = dot === -1 ? undefined : suffix.slice(dot + 1);
  }
  return undefined;
}

export function compileLinks(strategy: Of<'links'>): LocalCheck {
  const toSet = (domains: readonly string[] = []) =>
    new Set(domains.map(normaliseDomain).filter((domain): domain is string => domain !== undefined));
  const blocked = toSet(strategy.blockedDomains);
  const allowed = toSet(strategy.allowedDomains);
  const allowListed = (strategy.allowedDomains ?? []).length > 0;

  return (content) => {
    const reasons = new Set<string>();
    for (const host of content.hosts) {
      const hit = matchingDomain(host, blocked);
      if (hit) reasons.add(`Content links to blocked domain: ${hit}`);
      else if (allowListed && !matchingDomain(host, allowed)) {
        reasons.add(`Content links to a domain outside the allowed list: ${host}`);
      }
    }
    return [...reasons];
  };
}
