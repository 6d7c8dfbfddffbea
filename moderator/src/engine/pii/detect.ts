import { RE2JS, type Matcher } from 're2js';
import valid from 'card-validator';
import { countrySpecs, isValidIBAN } from 'ibantools';
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import type { PiiCategory } from '@vigil/proto/rules';
import { fold, originalSpan, type Folded } from './normalize';
import {
  AMBIGUOUS_APPS,
  CLEAR_APPS,
  COMMON_WORDS,
  DIGIT_WORDS,
  NOT_A_PHONE_BEFORE,
  NOT_IN_ADDRESS,
  SEPARATOR_WORDS,
} from './words';

/** One contact detail (or request for one): its category and its span [start, end) in the original text. */
export interface PiiMatch {
  category: PiiCategory;
  start: number;
  end: number;
}

export interface DetectOptions {
  categories: ReadonlySet<PiiCategory>;
  /** Countries whose national phone formats count (numbers written with + or 00 count whatever their country). */
  regions: readonly CountryCode[];
}

/**
 * Fixed expressions run on RE2 (re2js), as tenant patterns do: matching is linear in the text whatever it holds, so
 * no record can make the detector backtrack. Each is applied only when a cheap check finds what it needs in the text.
 */
const re = (source: string) => RE2JS.compile(source);

const apps = (list: readonly string[]) => `(?:${[...list].sort((a, b) => b.length - a.length).join('|')})`;
const CLEAR = apps(CLEAR_APPS);
const ANY_APP = apps([...CLEAR_APPS, ...AMBIGUOUS_APPS]);
const CLEAR_SET: ReadonlySet<string> = new Set(CLEAR_APPS);

const AT = String.raw`(?:\s{0,2}@\s{0,2}|\s{0,2}[(\[{<]\s{0,1}(?:at|@)\s{0,1}[)\]}>]\s{0,2}|\s{1,3}at\s{1,3})`;
const DOT = String.raw`(?:\s{0,1}\.\s{0,1}|\s{0,2}[(\[{<]\s{0,1}(?:dot|\.)\s{0,1}[)\]}>]\s{0,2}|\s{1,3}dot\s{1,3})`;
const PROVIDER = /^(?:gmail|googlemail|yahoo|hotmail|outlook|icloud|protonmail|proton|aol|gmx|yandex|msn)$/u;
const LOCAL = String.raw`[a-z0-9][a-z0-9_%+-]{0,63}(?:${DOT}[a-z0-9][a-z0-9_%+-]{0,63}){0,3}`;
const EMAIL = re(String.raw`(${LOCAL})(${AT})([a-z0-9][a-z0-9-]{0,62}(?:${DOT}[a-z0-9][a-z0-9-]{0,62}){0,4})\b`);
/** A dot however written: ".", " . ", "(dot)", "[.]", " dot ". */
const ANY_DOT = new RegExp(DOT, 'gu');
/** Top-level domains accepted when the address is written with words ("at", "dot"): an unusual one is prose. */
const WORD_TLDS: ReadonlySet<string> = new Set(
  'com net org io co uk de fr es it nl pl ru br in au ca me info biz us edu gov app dev xyz ai mail ch at be se no dk fi ie'.split(
    ' ',
  ),
);

const HANDLE_AFTER_APP = re(
  String.raw`\b(${ANY_APP})\b((?:[\s:=>~-]{0,3}(?:is|id|name|username|user|handle|acc|account|me|at|on|add|its|it's)\b){0,3}[\s:=>~-]{0,3})(@?)((?:live:)?[a-z0-9_][a-z0-9._]{1,29}(?:#\d{4})?)`,
);
const HANDLE_BEFORE_APP = re(String.raw`(@?)([a-z0-9_][a-z0-9._]{1,29})\s{1,2}(?:on|at|in|via)\s{1,2}(${ANY_APP})\b`);
const PROFILE_LINK = re(
  String.raw`\b(?:snapchat\.com/add|instagram\.com|t\.me|telegram\.me|wa\.me|discord\.gg|discord\.com/users|tiktok\.com/@?|kik\.me|m\.me|facebook\.com|fb\.com|twitter\.com|x\.com|onlyfans\.com)/[a-z0-9._@+-]{2,40}`,
);
const HAS_APP = new RegExp(`\\b${ANY_APP}\\b|\\.(?:com|me|gg)/`, 'u');

const YOUR = String.raw`(?:your|ur|yr|you're|youre|yur)`;
const NOUN = String.raw`(?:(?:phone|cell|mobile|cell phone|whatsapp|contact)\s{0,1}(?:number|num|no|#|info|details)?|number|num|digits|e-?mail(?:\s{0,1}address)?|socials?|handle|home address|address|addy|${CLEAR}(?:\s{0,1}(?:name|username|id|handle))?)`;
const ASKING = re(
  [
    String.raw`\b(?:what'?s|whats|wats|wuts?|what\s{1,2}is|where'?s|wheres)\s{1,2}${YOUR}\s{1,2}${NOUN}\b`,
    String.raw`\b(?:send|give|text|dm|pm|drop|share|gimme|leave|tell|msg|message|inbox)\s{1,2}(?:me\s{1,2})?${YOUR}\s{1,2}${NOUN}\b`,
    String.raw`\b(?:can|could|may|should)\s{1,2}i\s{1,2}(?:have|get|grab|add|take)\s{1,2}${YOUR}\s{1,2}${NOUN}\b`,
    String.raw`\b(?:got|have)\s{1,2}(?:a\s{1,2}|an\s{1,2})?${CLEAR}\s{0,2}\?`,
    String.raw`\b(?:do|d|you|u)\s{1,2}(?:you\s{1,2}|u\s{1,2})?(?:have|got|use|on)\s{1,2}(?:a\s{1,2}|an\s{1,2})?${CLEAR}\b`,
    String.raw`\b(?:add|dm|text|msg|message|hit|hmu|find|follow|call|ping|reach|contact)\s{1,2}(?:me\s{1,2})?(?:up\s{1,2})?(?:on|at|via|over|thru|through)\s{1,2}${CLEAR}\b`,
    String.raw`\b(?:let'?s|lets|we\s{1,2}(?:can|should)|wanna|want to)\s{1,2}(?:talk|chat|move|continue|switch|go|take this)\s{1,2}(?:on|to|over\s{1,2}to|this\s{1,2}to)\s{1,2}${CLEAR}\b`,
  ].join('|'),
);
const HAS_ASKING =
  /\b(?:got|have|your|ur|yr|youre|you're|yur|add|dm|text|msg|message|hit|hmu|find|follow|call|ping|reach|contact|let'?s|lets|we|wanna|want|do|d|you|u)\b/u;

const STREET =
  '(?:street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln|drive|dr|court|ct|way|place|pl|terrace|crescent|close|parkway|pkwy|highway|hwy|square|sq|circle|cir|trail|strasse|straße)';
const ADDRESS = re(
  String.raw`\b(\d{1,5}[a-z]?)\s{1,2}((?:[a-z0-9'.-]{1,20}\s{1,2}){0,3}?)${STREET}\b\.?((?:,?\s{0,2}(?:apt|apartment|unit|suite|ste|flat|#)\.?\s{0,2}#?[a-z0-9]{1,6})?)((?:,?\s{0,2}[a-z][a-z .]{1,30},?\s{0,2}(?:[a-z]{2}\s{1,2})?\d{5}(?:-\d{4})?)?)`,
);
const HAS_STREET = new RegExp(`\\d[a-z]?\\s{1,2}(?:\\S{1,20}\\s{1,2}){0,3}${STREET}\\b`, 'u');
/** Just before an address: someone giving their own place, not a business named in prose. */
const PERSONAL_ADDRESS_CUE =
  /(?:my (?:address|addy|place|house|home|apartment|apt|flat|crib)|i live|i'm at|im at|i am at|live at|live on|come (?:over )?to|meet (?:me )?at|ship (?:it |them )?to|send (?:it |them )?to|deliver (?:it |them )?to|mail (?:it |them )?to|pick me up (?:at|from)|staying at|address is|addy is|find me at|visit me at|drop (?:it |by |off )?(?:at|to)?|i'm on|im on|we live|we're at)[\s:,-]{0,4}(?:is[\s:]{1,2})?(?:at[\s:]{1,2})?$/u;

const IBAN_START = /\b[a-z]{2}\d{2}/u;
const IBAN = re(String.raw`\b([a-z]{2}\d{2})((?:[ -]?[a-z0-9]){10,32})`);

/** Which category wins when two matches overlap (the one earlier here). */
const PRIORITY: readonly PiiCategory[] = ['payment', 'email', 'phone', 'handle', 'address', 'asking'];

/** Contact details and requests for them in `text`, spans in `text`, sorted by start. Linear in the text's length. */
export function detectPii(text: string, options: DetectOptions): PiiMatch[] {
  const folded = fold(text);
  const found: { category: PiiCategory; start: number; end: number }[] = [];
  const want = options.categories;
  const t = folded.text;
  if (want.has('phone') || want.has('payment')) digitRuns(t, options, found);
  if (want.has('payment') && IBAN_START.test(t)) ibans(t, found);
  if (want.has('email') && (t.includes('@') || t.includes('at'))) emails(t, found);
  if (want.has('handle') && HAS_APP.test(t)) handles(t, found);
  if (want.has('address') && HAS_STREET.test(t)) addresses(t, found);
  if (want.has('asking') && HAS_ASKING.test(t)) asking(t, found);
  return resolve(
    found.filter((match) => want.has(match.category)),
    folded,
  );
}

/** Drops matches that overlap one of higher priority, maps the rest to the original text. */
function resolve(found: PiiMatch[], folded: Folded): PiiMatch[] {
  const ordered = [...found].sort(
    (a, b) => PRIORITY.indexOf(a.category) - PRIORITY.indexOf(b.category) || a.start - b.start,
  );
  const kept: PiiMatch[] = [];
  for (const match of ordered) {
    if (kept.some((other) => match.start < other.end && other.start < match.end)) continue;
    kept.push(match);
  }
  return kept
    .sort((a, b) => a.start - b.start)
    .map((match) => {
      const [start, end] = originalSpan(folded, match.start, match.end);
      return { category: match.category, start, end };
    });
}

interface Run {
  start: number;
  end: number;
  digits: string;
  plus: boolean;
  /** Lengths of the digit groups between separators other than spaces (dates: 2024-01-31). */
  groups: number[];
  /** Separators other than white space seen between digits. */
  marks: string;
  /** A letter touches its first or last digit ("A12345", "5pm"). */
  attached: boolean;
  /** Digits spelled out as words. */
  spelled: number;
}

const isDigit = (c: string) => c >= '0' && c <= '9';
const isLetter = (c: string) => (c >= 'a' && c <= 'z') || c === "'";
const SEPARATORS = new Set([
  ',',
  ' ',
  '\t',
  '\n',
  '\r',
  '.',
  '-',
  '(',
  ')',
  '_',
  '*',
  '~',
  '|',
  '\u00a0',
  '\u2013',
  '\u2014',
]);
const MAX_GAP = 4;

/** Runs of digits (written, spelled or emoji) with separators between them; each is judged as a card, then a phone. */
function digitRuns(t: string, options: DetectOptions, found: PiiMatch[]): void {
  let run: Run | undefined;
  let gap = 0;
  let group = 0;
  const finish = (attachedAfter: boolean) => {
    if (run) {
      if (group > 0) run.groups.push(group);
      run.attached ||= attachedAfter;
      judgeRun(t, run, options, found);
    }
    run = undefined;
    gap = 0;
    group = 0;
  };
  const addDigits = (digits: string, start: number, end: number, attachedBefore: boolean) => {
    // "(415) 555 2671": the opening parenthesis belongs to the number.
    const from = start > 0 && t[start - 1] === '(' ? start - 1 : start;
    run ??= { start: from, end, digits: '', plus: false, groups: [], marks: '', attached: attachedBefore, spelled: 0 };
    run.digits += digits;
    run.end = end;
    gap = 0;
  };
  for (let i = 0; i < t.length;) {
    const c = t[i]!;
    if (isDigit(c)) {
      addDigits(c, i, i + 1, i > 0 && isLetter(t[i - 1]!));
      group += 1;
      i += 1;
    } else if (isLetter(c)) {
      let j = i + 1;
      while (j < t.length && isLetter(t[j]!)) j += 1;
      const word = t.slice(i, j);
      const digit = DIGIT_WORDS.get(word);
      const wordStart = i === 0 || !isDigit(t[i - 1]!);
      if (word === 'o' && run?.digits && !wordStart && j < t.length && isDigit(t[j]!)) {
        // "2O6": a letter O between digits stands for zero.
        run.digits += '0';
        run.end = j;
        group += 1;
      } else if (
        digit !== undefined &&
        wordStart &&
        (word !== 'oh' || run?.digits) &&
        !(j < t.length && isDigit(t[j]!))
      ) {
        if (group > 0 && run) run.groups.push(group);
        group = 0;
        addDigits(digit, i, j, false);
        run!.spelled += 1;
      } else if (run?.digits && SEPARATOR_WORDS.has(word) && gap <= MAX_GAP) {
        gap += 1;
      } else {
        finish(run !== undefined && gap === 0 && run.end === i);
      }
      i = j;
    } else if (SEPARATORS.has(c) && run) {
      gap += 1;
      if (gap > MAX_GAP) finish(false);
      else if (c !== ' ' && c !== '\n' && c !== '\t' && c !== '\r') {
        if (group > 0) run.groups.push(group);
        group = 0;
        if (!run.marks.includes(c)) run.marks += c;
      }
      i += 1;
    } else if (c === '+' && !run) {
      run = { start: i, end: i + 1, digits: '', plus: true, groups: [], marks: '', attached: false, spelled: 0 };
      i += 1;
    } else {
      finish(false);
      i += 1;
    }
  }
  finish(false);
}

function judgeRun(t: string, run: Run, options: DetectOptions, found: PiiMatch[]): void {
  const { digits } = run;
  if (digits.length < 7 || digits.length > 19 || run.attached) return;
  // Commas join spelled digits ("two one two, five five five"); between written ones they make lists and prices.
  if (run.marks.includes(',') && run.spelled === 0) return;
  const before = t.slice(Math.max(0, run.start - 30), run.start);
  const after = t.slice(run.end, run.end + 2);
  if (/[$€£¥₹#%]\s{0,1}$/u.test(before) || /^\s{0,1}[%$€£¥₹]/u.test(after) || /^[,.]\d/u.test(after)) return;
  if (digits.length >= 13 && options.categories.has('payment') && valid.number(digits).isValid) {
    found.push({ category: 'payment', start: run.start, end: run.end });
    return;
  }
  if (!options.categories.has('phone') || digits.length > 15) return;
  if (!run.plus && NOT_A_PHONE_BEFORE.test(before)) return;
  // Counting ("1 2 3 4 5 6 7 8 9 10").
  if ('012345678910'.includes(digits)) return;
  if (looksLikeDateOrVersion(run)) return;
  if (isPhone(run, options.regions)) found.push({ category: 'phone', start: run.start, end: run.end });
}

/** 2024-01-31, 31.01.2024, 10.0.19045.2364, 192.168.1.10: grouped by marks into a date's or a version's shape. */
function looksLikeDateOrVersion(run: Run): boolean {
  if (run.marks === '' || run.groups.length < 3) return false;
  const [first = 0, second = 0, third = 0] = run.groups;
  if (run.groups.length === 3 && first + second + third <= 8 && Math.max(first, second, third) <= 4) return true;
  // A digit per dot ("4.1.5.8.6.7.5.3.0.9") is a spelled-out number, not a version.
  if (run.groups.every((length) => length === 1)) return false;
  return run.marks === '.' && run.groups.length >= 4 && run.groups.every((length) => length <= 5);
}

function isPhone(run: Run, regions: readonly CountryCode[]): boolean {
  const international = run.plus ? run.digits : run.digits.startsWith('00') ? run.digits.slice(2) : undefined;
  if (international !== undefined) return parsePhoneNumberFromString(`+${international}`)?.isValid() ?? false;
  return regions.some((region) => parsePhoneNumberFromString(run.digits, region)?.isValid() ?? false);
}

function ibans(t: string, found: PiiMatch[]): void {
  const matcher = IBAN.matcher(t);
  while (matcher.find()) {
    const country = (matcher.group(1) ?? '').slice(0, 2).toUpperCase();
    const length = countrySpecs[country]?.chars;
    if (!length) continue;
    // The IBAN is the country's length of letters and digits from the start, separators skipped.
    let count = 0;
    let end = matcher.start();
    let compact = '';
    for (let i = matcher.start(); i < matcher.end() && count < length; i += 1) {
      const c = t[i]!;
      if (c === ' ' || c === '-') continue;
      compact += c;
      count += 1;
      end = i + 1;
    }
    if (count === length && isValidIBAN(compact.toUpperCase())) {
      found.push({ category: 'payment', start: matcher.start(), end });
    }
  }
}

/**
 * Each match of `expression` in `t`; `accept` says whether it counts. After a refused match the search goes on from
 * the character after its start, so that "me at jane@example.com" still finds the address; a match is at most a few
 * hundred characters long (bounded repetitions), so the search stays linear in the text.
 */
function eachMatch(expression: RE2JS, t: string, accept: (matcher: Matcher) => boolean): void {
  const matcher = expression.matcher(t);
  let from = 0;
  while (from <= t.length && matcher.find(from)) {
    from = accept(matcher) ? Math.max(matcher.end(), matcher.start() + 1) : matcher.start() + 1;
  }
}

function emails(t: string, found: PiiMatch[]): void {
  eachMatch(EMAIL, t, (matcher) => {
    const local = (matcher.group(1) ?? '').replace(ANY_DOT, '.');
    const at = matcher.group(2) ?? '';
    const domain = matcher.group(3) ?? '';
    const labels = domain.replace(ANY_DOT, '.').split('.');
    const literal = at.includes('@') && /^[a-z0-9.-]+$/u.test(domain);
    const tld = labels.length > 1 ? labels[labels.length - 1]! : undefined;
    let ok: boolean;
    if (tld === undefined) ok = PROVIDER.test(domain);
    else ok = literal ? /^[a-z]{2,24}$/u.test(tld) : WORD_TLDS.has(tld);
    // A word form needs a local part that is not an ordinary word ("look at google dot com").
    if (ok && !at.includes('@') && COMMON_WORDS.has(local)) ok = false;
    if (ok) found.push({ category: 'email', start: matcher.start(), end: matcher.end() });
    return ok;
  });
}

const isStrongHandle = (handle: string) => /[\d_.]/u.test(handle);

function handles(t: string, found: PiiMatch[]): void {
  eachMatch(HANDLE_AFTER_APP, t, (after) => {
    const app = after.group(1) ?? '';
    const between = after.group(2) ?? '';
    const sign = after.group(3) ?? '';
    const handle = (after.group(4) ?? '').replace(/\.+$/u, '');
    if (handle.length < 2) return false;
    if (!sign && (COMMON_WORDS.has(handle) || CLEAR_SET.has(handle) || DIGIT_WORDS.has(handle))) return false;
    // A bare word right after an app is often what it is about ("snap score", "discord nitro"): a handle needs an @,
    // a digit, _ or ., or a word or sign that introduces it; "line", "signal", "wa" (ordinary words) need more still.
    const introduced = /[:=]|\b(?:is|id|name|username|user|handle|its|it's)\b/u.test(between);
    const strong = sign !== '' || isStrongHandle(handle);
    if (CLEAR_SET.has(app) ? !strong && !introduced : !strong && !/[:=]|\b(?:id|username|handle)\b/u.test(between)) {
      return false;
    }
    const end = after.start(4) + handle.length;
    found.push({ category: 'handle', start: after.start(), end });
    return true;
  });
  eachMatch(HANDLE_BEFORE_APP, t, (before) => {
    const sign = before.group(1) ?? '';
    const handle = before.group(2) ?? '';
    const app = before.group(3) ?? '';
    if (!sign && (!isStrongHandle(handle) || COMMON_WORDS.has(handle) || !CLEAR_SET.has(app))) return false;
    found.push({ category: 'handle', start: before.start(), end: before.end() });
    return true;
  });
  const link = PROFILE_LINK.matcher(t);
  while (link.find()) found.push({ category: 'handle', start: link.start(), end: link.end() });
}

function addresses(t: string, found: PiiMatch[]): void {
  const matcher = ADDRESS.matcher(t);
  while (matcher.find()) {
    const middle = (matcher.group(2) ?? '').trim();
    const words = middle ? middle.split(/\s+/u) : [];
    if (words.some((word) => NOT_IN_ADDRESS.has(word))) continue;
    const unit = (matcher.group(3) ?? '') !== '';
    const zip = (matcher.group(4) ?? '') !== '';
    const cue = PERSONAL_ADDRESS_CUE.test(t.slice(Math.max(0, matcher.start() - 40), matcher.start()).trimEnd() + ' ');
    if (!cue && !unit && !zip) continue;
    found.push({ category: 'address', start: matcher.start(), end: matcher.end() });
  }
}

function asking(t: string, found: PiiMatch[]): void {
  const matcher = ASKING.matcher(t);
  while (matcher.find()) {
    // "what's your number one tip": a rank, not a phone.
    if (/^\s{1,2}(?:one|1|two|2|of)\b/u.test(t.slice(matcher.end(), matcher.end() + 6))) continue;
    found.push({ category: 'asking', start: matcher.start(), end: matcher.end() });
  }
}
