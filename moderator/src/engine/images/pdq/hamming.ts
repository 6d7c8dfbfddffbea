import { ValidationError } from '../../../domain/errors';

/** A 256-bit hash as eight 32-bit words, the first word holding the first 8 hex digits. */
export type HashWords = Uint32Array;

const HEX_256 = /^[0-9a-f]{64}$/i;

/** The words of a 256-bit hash written as 64 hex digits (a PDQ hash); anything else is a ValidationError. */
export function hashWords(hex: string): HashWords {
  if (!HEX_256.test(hex)) throw new ValidationError('a 256-bit hash is 64 hex digits');
  const words = new Uint32Array(8);
  for (let i = 0; i < 8; i++) words[i] = Number.parseInt(hex.slice(i * 8, i * 8 + 8), 16);
  return words;
}

/**
 * The number of bits in which two 256-bit hashes differ (0 to 256). Hashes compared many times (a bank) are best
 * parsed once with hashWords; a comparison is then eight XORs and population counts.
 */
export function hammingDistance(a: string | HashWords, b: string | HashWords): number {
  const x = typeof a === 'string' ? hashWords(a) : a;
  const y = typeof b === 'string' ? hashWords(b) : b;
  let distance = 0;
  for (let i = 0; i < 8; i++) distance += popcount32((x[i]! ^ y[i]!) >>> 0);
  return distance;
}

/** Set bits of a 32-bit word, by the usual SWAR steps (JavaScript has no population-count operator). */
function popcount32(word: number): number {
  let v = word - ((word >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  v = (v + (v >>> 4)) & 0x0f0f0f0f;
  return Math.imul(v, 0x01010101) >>> 24;
}
