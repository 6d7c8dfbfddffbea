/**
 * Text folded for contact-detail detection, with each folded character's span in the original text: lower case,
 * NFKC (fullwidth, circled, superscript and mathematical digits and letters become ASCII), Cyrillic and Greek
 * look-alikes folded to Latin letters, and invisible characters (zero-width, variation selectors, the keycap mark)
 * dropped into the span of the character before them, so that "5️⃣" folds to "5" and masks whole.
 */
export interface Folded {
  text: string;
  /** Original UTF-16 offset where folded character i starts. */
  starts: readonly number[];
  /** Original UTF-16 offset where folded character i ends (after anything dropped behind it). */
  ends: readonly number[];
}

/** Cyrillic and Greek letters drawn like Latin ones (lower case; upper case is lowered first). */
const LOOK_ALIKES: Readonly<Record<string, string>> = {
  а: 'a',
  в: 'b',
  е: 'e',
  ё: 'e',
  к: 'k',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  с: 'c',
  т: 't',
  у: 'y',
  х: 'x',
  і: 'i',
  ї: 'i',
  ј: 'j',
  ѕ: 's',
  ԁ: 'd',
  ԛ: 'q',
  ԝ: 'w',
  һ: 'h',
  ӏ: 'l',
  ɡ: 'g',
  ɑ: 'a',
  ı: 'i',
  α: 'a',
  β: 'b',
  ε: 'e',
  η: 'n',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
  ω: 'w',
  ς: 'c',
  σ: 'o',
  γ: 'y',
};

/** Dropped: zero-width characters, word joiner, soft hyphen, variation selectors, the combining keycap. */
function invisible(point: number): boolean {
  return (
    point === 0xad ||
    (point >= 0x200b && point <= 0x200f) ||
    (point >= 0x2060 && point <= 0x2064) ||
    point === 0xfeff ||
    (point >= 0xfe00 && point <= 0xfe0f) ||
    point === 0x20e3
  );
}

/** Emoji that stand for numbers and have no NFKC form. */
const EMOJI_NUMBERS: Readonly<Record<string, string>> = { '\u{1f51f}': '10' };

const folds = new Map<number, string>();

/** How one non-ASCII code point folds (cached: chat text reuses few of them). */
function foldPoint(point: number): string {
  const known = folds.get(point);
  if (known !== undefined) return known;
  const character = String.fromCodePoint(point);
  let folded: string;
  if (invisible(point)) folded = '';
  else if (EMOJI_NUMBERS[character] !== undefined) folded = EMOJI_NUMBERS[character];
  else {
    folded = '';
    for (const part of character.normalize('NFKC').toLowerCase()) folded += LOOK_ALIKES[part] ?? part;
  }
  // Bounded: a record holds at most as many distinct code points as characters, and Unicode has about 150,000.
  if (folds.size < 65_536) folds.set(point, folded);
  return folded;
}

/** Folds `text` in one pass, linear in its length. */
export function fold(text: string): Folded {
  const out: string[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  for (let i = 0; i < text.length;) {
    const code = text.charCodeAt(i);
    if (code < 0x80) {
      out.push(code >= 0x41 && code <= 0x5a ? String.fromCharCode(code + 32) : text[i]!);
      starts.push(i);
      ends.push(i + 1);
      i += 1;
      continue;
    }
    const point = text.codePointAt(i)!;
    const width = point > 0xffff ? 2 : 1;
    const folded = foldPoint(point);
    if (folded === '') {
      if (ends.length > 0) ends[ends.length - 1] = i + width;
    } else {
      for (const character of folded) {
        // A folded character outside the BMP keeps its two code units, each mapped to the whole original.
        for (let unit = 0; unit < character.length; unit += 1) {
          out.push(character[unit]!);
          starts.push(i);
          ends.push(i + width);
        }
      }
    }
    i += width;
  }
  return { text: out.join(''), starts, ends };
}

/** The original span of folded characters [start, end). */
export function originalSpan(folded: Folded, start: number, end: number): [number, number] {
  return [folded.starts[start] ?? 0, folded.ends[end - 1] ?? 0];
}
