import { PdqIndex, MAX_INDEX_DISTANCE } from './pdq-index';

/** A pseudo-random hash (xorshift from `seed`), 64 hex digits. */
function randomHash(seed: number): string {
  let x = seed * 2654435761 + 1;
  let out = '';
  for (let i = 0; i < 8; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out += (x >>> 0).toString(16).padStart(8, '0');
  }
  return out;
}

/** `hex` with the given bit positions (0 = the first hex digit's high bit) flipped. */
function flip(hex: string, bits: readonly number[]): string {
  const digits = hex.split('').map((digit) => Number.parseInt(digit, 16));
  for (const bit of bits) digits[bit >> 2] = digits[bit >> 2]! ^ (8 >> (bit & 3));
  return digits.map((digit) => digit.toString(16)).join('');
}

/** `count` distinct bit positions spread over the hash. */
const spread = (count: number, offset = 0): number[] => Array.from({ length: count }, (_, i) => (i * 8 + offset) % 256);

const byKey = <K>(hits: { key: K; distance: number }[]) =>
  [...hits].sort((a, b) => String(a.key).localeCompare(String(b.key)));

describe('PdqIndex', () => {
  const base = randomHash(1);

  it.each([0, 1, 15, 16, 17, 30, 31])('finds a hash %i bits away at distance 31', (bits) => {
    const index = new PdqIndex<string>();
    index.add('a', flip(base, spread(bits)));
    expect(index.near(base, 31)).toEqual([{ key: 'a', distance: bits }]);
  });

  it('does not answer a hash 32 bits away at distance 31, and answers it at 32', () => {
    const index = new PdqIndex<string>();
    index.add('a', flip(base, spread(32)));
    expect(index.near(base, 31)).toEqual([]);
    expect(index.near(base, 32)).toEqual([{ key: 'a', distance: 32 }]);
  });

  it('finds a hash whose flipped bits all fall in one 16-bit chunk, and in as many chunks as possible', () => {
    const index = new PdqIndex<string>();
    index.add(
      'one-chunk',
      flip(
        base,
        Array.from({ length: 16 }, (_, i) => i),
      ),
    );
    // Two bits in each of 15 chunks and one in the last: 31 in all, no chunk within one bit except the last.
    const wide = Array.from({ length: 15 }, (_, chunk) => [chunk * 16, chunk * 16 + 1]).flat();
    index.add('wide', flip(base, [...wide, 15 * 16]));
    expect(
      index
        .near(base, 31)
        .map((hit) => hit.key)
        .sort(),
    ).toEqual(['one-chunk', 'wide']);
  });

  it('answers exactly what a linear scan answers, at every distance it allows', () => {
    const index = new PdqIndex<number>();
    for (let i = 0; i < 3000; i++) index.add(i, randomHash(i + 10));
    // Near copies of a few of them, at distances spread over the range.
    for (let i = 0; i < 60; i++) index.add(10_000 + i, flip(randomHash(i + 10), spread(i % 64, i)));
    for (const distance of [0, 10, 31, 47, MAX_INDEX_DISTANCE]) {
      for (let q = 0; q < 20; q++) {
        const query = randomHash(q + 10);
        expect(byKey(index.near(query, distance))).toEqual(byKey(index.scan(query, distance)));
      }
    }
  });

  it('removes and replaces hashes in place, across the switch to dense buckets', () => {
    const index = new PdqIndex<number>();
    for (let i = 0; i < 9000; i++) index.add(i, randomHash(i + 1));
    expect(index.size).toBe(9000);
    expect(index.near(base, 0)).toEqual([{ key: 0, distance: 0 }]);
    expect(index.remove(0)).toBe(true);
    expect(index.near(base, 31)).toEqual([]);
    index.add(5, base);
    expect(index.near(base, 0)).toEqual([{ key: 5, distance: 0 }]);
    expect(index.near(randomHash(6), 0)).toEqual([]);
    expect(index.size).toBe(8999);
  });

  it('refuses a distance it cannot answer', () => {
    expect(() => new PdqIndex<string>().near(base, MAX_INDEX_DISTANCE + 1)).toThrow(RangeError);
  });
});
