import type * as Obscenity from 'obscenity';

/**
 * obscenity and its matcher, loaded and built on first use, once per thread: building compiles the whole English
 * dataset. Only the engine threads judge text; the moderator's main thread, which imports this module with the
 * engine, never loads obscenity's modules (about 5 MB resident).
 */
let loaded: { obscenity: typeof Obscenity; matcher: Obscenity.RegExpMatcher } | undefined;

function load(): NonNullable<typeof loaded> {
  if (!loaded) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const obscenity = require('obscenity') as typeof Obscenity;
    const { englishDataset, englishRecommendedTransformers, RegExpMatcher } = obscenity;
    loaded = {
      obscenity,
      matcher: new RegExpMatcher({ ...englishDataset.build(), ...englishRecommendedTransformers }),
    };
  }
  return loaded;
}

/**
 * Fields are joined into one text because each matcher call has a fixed cost of about 12 µs. The separator mixes
 * characters so that the duplicate-collapsing transformer cannot shrink it into a one-character wildcard match
 * ("f" + "\n" + "ck" would read as a profanity across two fields).
 */
const FIELD_SEPARATOR = '\n \n';
const LETTER = /\p{L}/u;

/** The profane words (dataset originals such as "fuck", never the obfuscated text) found in any of the fields. */
export function profaneWords(fields: readonly string[]): string[] {
  const { obscenity, matcher } = load();
  const text = fields.join(FIELD_SEPARATOR);
  if (!matcher.hasMatch(text)) return [];
  const words = new Set<string>();
  for (const match of matcher.getAllMatches(text, true)) {
    // Leetspeak reads digits as letters ("455" as "ass", "717" as "tit"); a match needs at least one real letter, so
    // prices, counts and ids are not profane.
    if (!LETTER.test(text.slice(match.startIndex, match.endIndex + 1))) continue;
    const word = obscenity.englishDataset.getPayloadWithPhraseMetadata(match).phraseMetadata?.originalWord;
    if (word) words.add(word);
  }
  return [...words];
}
