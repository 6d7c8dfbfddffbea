import { englishDataset, englishRecommendedTransformers, RegExpMatcher } from 'obscenity';

// Building the matcher compiles the whole English dataset: once per process, on first use.
let matcher: RegExpMatcher | undefined;

/** The profane words (dataset originals such as "fuck", never the obfuscated text) found in any of the fields. */
export function profaneWords(fields: readonly string[]): string[] {
  matcher ??= new RegExpMatcher({ ...englishDataset.build(), ...englishRecommendedTransformers });
  const words = new Set<string>();
  for (const field of fields) {
    if (!matcher.hasMatch(field)) continue;
    for (const match of matcher.getAllMatches(field, true)) {
      const word = englishDataset.getPayloadWithPhraseMetadata(match).phraseMetadata?.originalWord;
      if (word) words.add(word);
    }
  }
  return [...words];
}
