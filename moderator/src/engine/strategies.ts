import type { Strategy } from '@vigil/proto/rules';
import { compilePattern } from '@vigil/proto/rules/pattern';
import { hostOf, type Content } from './content';

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
function wordSource(word: string, wholeWord: boolean): string {
  const literal = word.trim().split(/\s+/u).map(escapeRegExp).join('\\s+');
  return wholeWord ? `${NOT_AFTER_WORD}${literal}${NOT_BEFORE_WORD}` : literal;
}

const WORD_CHARACTER = /[\p{L}\p{M}\p{N}_]/u;

/** The code point that ends just before `index` (a surrogate pair read whole), or '' at the start. */
function characterBefore(text: string, index: number): string {
  if (index === 0) return '';
  const low = text.charCodeAt(index - 1);
  if (index >= 2 && low >= 0xdc00 && low <= 0xdfff) {
    const high = text.charCodeAt(index - 2);
    if (high >= 0xd800 && high <= 0xdbff) return text.slice(index - 2, index);
  }
  return text.slice(index - 1, index);
}

/** The code point that starts at `index`, or '' at the end. */
function characterAt(text: string, index: number): string {
  const point = text.codePointAt(index);
  return point === undefined ? '' : String.fromCodePoint(point);
}

/**
 * Whether `regex` (global, literal) matches in `text`, as a whole word when asked: no letter, mark, digit or `_` on
 * either side. The boundary is checked here rather than by lookaround in each word's expression: V8 compiles a
 * `\p{L}` lookaround in about 2 ms per expression, which made the first record after a 1,000-word whole-word list was
 * compiled take two seconds.
 */
function containsWord(text: string, regex: RegExp, wholeWord: boolean): boolean {
  regex.lastIndex = 0;
  if (!wholeWord) return regex.test(text);
  for (let match = regex.exec(text); match; match = regex.exec(text)) {
    const end = match.index + match[0].length;
    if (!WORD_CHARACTER.test(characterBefore(text, match.index)) && !WORD_CHARACTER.test(characterAt(text, end))) {
      return true;
    }
    // An overlapping candidate may start inside this one ("aa" in "aaa b aa"): go on from the next character.
    regex.lastIndex = match.index + characterAt(text, match.index).length;
  }
  return false;
}

export function compileBlocklist(strategy: Of<'blocklist'>): LocalCheck {
  const wholeWord = strategy.wholeWord ?? false;
  const seen = new Set<string>();
  const words: { word: string; regex: RegExp }[] = [];
  for (const raw of strategy.words ?? []) {
    const word = raw.trim();
    if (!word || seen.has(word.toLowerCase())) continue;
    seen.add(word.toLowerCase());
    words.push({ word, regex: new RegExp(wordSource(word, false), 'giu') });
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
    const hits = anyWord ? content.fields.filter((field) => anyWord.test(field)) : [];
    if (hits.length > 0) {
      for (const { word, regex } of words) {
        if (hits.some((field) => containsWord(field, regex, wholeWord))) {
          reasons.push(`Content contains blocked word: ${word}`);
        }
      }
    }
    if (profanity) {
      for (const word of content.profane) reasons.push(`Content contains blocked word: ${word}`);
    }
    return reasons;
  };
}

/** Tenant patterns run on RE2 (see compilePattern) over every field whole: linear in its length, whatever the pattern. */
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
      .filter(({ regex }) => content.fields.some((field) => regex.test(field)))
      .map(({ source }) => `Content matches pattern: ${source}`);
}

/** A configured domain as a host name ("https://Shop.Example.com/x", "*.example.com." → "shop.example.com"). */
function normaliseDomain(domain: string): string | undefined {
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
