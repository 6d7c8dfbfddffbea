import fc from 'fast-check';
import { ValidationError } from '../../../domain/errors';
import { hammingDistance, hashWords } from './hamming';

/** An independent count: the XOR as one big integer, its binary digits counted. */
function oracle(a: string, b: string): number {
  return [...(BigInt(`0x${a}`) ^ BigInt(`0x${b}`)).toString(2)].filter((digit) => digit === '1').length;
}

const hex256 = fc.stringMatching(/^[0-9a-f]{64}$/);
const zero = '0'.repeat(64);

describe('hammingDistance', () => {
  it.each([
    ['equal hashes', zero, zero, 0],
    ['complements', zero, 'f'.repeat(64), 256],
    ['the top bit', zero, `8${'0'.repeat(63)}`, 1],
    ['the bottom bit', zero, `${'0'.repeat(63)}1`, 1],
    ['upper and lower case', 'ABCDEF'.padEnd(64, '0'), 'abcdef'.padEnd(64, '0'), 0],
    // The reference's hashes of the bridge photo and of its high-saturation copy (pdq/data/bridge-mods).
    [
      'two reference hashes',
      'd8f8f0cee0f4a84f0637022a078f67f0b36e2ed596621e1d33e6339c4e9c9b22',
      'd8f8f0cee0f4a84f0637022a038f67f0b36e2ed596631e1d33e6339c4e9c9b22',
      2,
    ],
  ])('counts %s', (_name, a, b, distance) => {
    expect(hammingDistance(a, b)).toBe(distance);
  });

  it('counts each single bit flipped', () => {
    for (let bit = 0; bit < 256; bit++) {
      const flipped = (1n << BigInt(bit)).toString(16).padStart(64, '0');
      expect(hammingDistance(zero, flipped)).toBe(1);
    }
  });

  it('agrees with counting the bits of the XOR, from strings and from parsed words', () => {
    fc.assert(
      fc.property(hex256, hex256, (a, b) => {
        const expected = oracle(a, b);
        expect(hammingDistance(a, b)).toBe(expected);
        expect(hammingDistance(hashWords(a), hashWords(b))).toBe(expected);
      }),
    );
  });

  it.each([
    ['63 digits', '0'.repeat(63)],
    ['65 digits', '0'.repeat(65)],
    ['a non-hex digit', `g${'0'.repeat(63)}`],
    ['a 0x prefix', `0x${'0'.repeat(62)}`],
  ])('refuses a hash of %s with a ValidationError', (_name, hash) => {
    expect(() => hammingDistance(hash, zero)).toThrow(ValidationError);
  });
});
