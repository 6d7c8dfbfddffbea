import type { LookupBody, LookupResult } from '../../routes/hash-banks/hash-banks.schema';
import { callFor, toMatchView, type BankCaller } from './views';

/** Matches a hash, or an image fetched and hashed now, against the tenant's enabled banks; stores nothing. */
export async function lookupHashes(caller: BankCaller, input: LookupBody): Promise<LookupResult> {
  const result = await callFor(
    caller,
    'lookupHashes',
    'imageUrl' in input ? { imageUrl: input.imageUrl } : { kind: input.kind, value: input.hash.toLowerCase() },
  );
  return {
    image: result.image
      ? {
          md5: result.image.md5,
          sha256: result.image.sha256,
          pdq: result.image.pdq ?? null,
          pdqQuality: result.image.pdqQuality ?? null,
        }
      : null,
    matches: result.matches.map(toMatchView),
    cancelled: result.cancelled.map(toMatchView),
    failure: result.failure ?? null,
  };
}
