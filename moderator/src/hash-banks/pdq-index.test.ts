import { createHmac } from 'node:crypto';
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

/** Ids as the store makes them (hashIdOf): an HMAC's first 22 base64url characters. */
const idOf = (i: number): string =>
  `hsh_${createHmac('sha256', 'salt').update(String(i)).digest('base64url').slice(0, 22)}`;

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

  it('finds a hash exactly at the distance, at every distance from 0 to 63, and not one bit further', () => {
    for (let distance = 0; distance <= MAX_INDEX_DISTANCE; distance++) {
      const index = new PdqIndex<string>();
      // Bits 4 apart, so that up to 64 of them are distinct.
      const bits = (count: number): number[] => Array.from({ length: count }, (_, i) => (i * 4 + distance) % 256);
      index.add(idOf(1), flip(base, bits(distance)));
      index.add(idOf(2), flip(base, bits(distance + 1)));
      expect(index.near(base, distance)).toEqual([{ key: idOf(1), distance }]);
    }
  });

  it('forgets a removed hash in every chunk, and finds it again once re-added, under hash ids', () => {
    const index = new PdqIndex<string>();
    for (let i = 0; i < 2000; i++) index.add(idOf(i), randomHash(i + 100));
    index.add(idOf(5000), base);
    expect(index.remove(idOf(5000))).toBe(true);
    expect(index.remove(idOf(5000))).toBe(false);
    expect(index.has(idOf(5000))).toBe(false);
    expect(index.near(base, MAX_INDEX_DISTANCE)).toEqual(index.scan(base, MAX_INDEX_DISTANCE));
    expect(index.near(base, 31)).toEqual([]);
    index.add(idOf(5000), flip(base, spread(3)));
    expect(index.near(base, 31)).toEqual([{ key: idOf(5000), distance: 3 }]);
    // Re-adding a key with another hash moves it: the old hash no longer answers.
    index.add(idOf(5000), randomHash(99_999));
    expect(index.near(base, 31)).toEqual([]);
    expect(index.near(randomHash(99_999), 0)).toEqual([{ key: idOf(5000), distance: 0 }]);
    expect(index.size).toBe(2001);
  });

  it('answers what a scan answers after adds, removals and re-adds in one bucket and across pages of slots', () => {
    const index = new PdqIndex<string>();
    // 70,000 hashes (more than a page of 65,536 slots), a thousand of them in one bucket of the first chunk.
    for (let i = 0; i < 67_000; i++) {
      const hex = randomHash(i + 7);
      index.add(idOf(i), i % 70 === 0 ? 'abcd' + hex.slice(4) : hex);
    }
    for (let i = 0; i < 67_000; i += 3) index.remove(idOf(i));
    for (let i = 0; i < 67_000; i += 9) index.add(idOf(i), randomHash(i + 1_000_000));
    const queries = [randomHash(8), randomHash(66_999 + 7), 'abcd' + randomHash(77).slice(4), randomHash(1_000_009)];
    for (const query of queries) {
      for (const distance of [0, 31, 47]) {
        expect(byKey(index.near(query, distance))).toEqual(byKey(index.scan(query, distance)));
      }
    }
    expect(index.near(randomHash(1_000_009), 0)).toEqual([{ key: idOf(9), distance: 0 }]);
    expect(index.size).toBe(67_000 - Math.ceil(67_000 / 3) + Math.ceil(67_000 / 9));
  });

  it("keeps each hash's tag, and removes the hashes of one tag only", () => {
    const index = new PdqIndex<string>();
    for (let i = 0; i < 300; i++) index.add(idOf(i), randomHash(i + 1), i % 3);
    expect(index.tagOf(idOf(4))).toBe(1);
    expect(index.tagOf(idOf(1000))).toBeUndefined();
    expect(index.removeTagged(1)).toBe(100);
    expect(index.size).toBe(200);
    expect(index.near(randomHash(5), 0)).toEqual([]);
    expect(index.near(randomHash(6), 0)).toEqual([{ key: idOf(5), distance: 0 }]);
    expect(() => index.add(idOf(1), base, 65_535)).toThrow(RangeError);
  });

  it('takes under 140 bytes of typed arrays for each hash added, the bucket headers aside', () => {
    const index = new PdqIndex<string>();
    for (let i = 0; i < 30_000; i++) index.add(idOf(i), randomHash(i + 1));
    const before = index.byteLength;
    for (let i = 30_000; i < 60_000; i++) index.add(idOf(i), randomHash(i + 1));
    expect((index.byteLength - before) / 30_000).toBeLessThan(140);
  });

  it('refuses a distance it cannot answer', () => {
    expect(() => new PdqIndex<string>().near(base, MAX_INDEX_DISTANCE + 1)).toThrow(RangeError);
  });
});
