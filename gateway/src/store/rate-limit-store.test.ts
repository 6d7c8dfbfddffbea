import { decodeCounts, encodeCounts } from './rate-limit-store';

const counts = [
  { key: 'key_01A', windowMs: 60_000, start: 1_732_371_600_000, count: 5 },
  { key: 'key_01B', windowMs: 10_000, start: 1_732_371_650_000, count: 1 },
  { key: 'key_01C', windowMs: 60_000, start: 1_732_371_600_000, count: 360_000 },
];

describe('rate limit counts as stored', () => {
  it("writes a line per window length and per key with the key's slot counts, and reads the same counts back", () => {
    const text = encodeCounts(counts);
    expect(text).toBe('%60000 1732371600000\nkey_01A 5\nkey_01C 360000\n%10000 1732371650000\nkey_01B 1');
    expect(decodeCounts(text)).toEqual([counts[0], counts[2], counts[1]]);
    expect(decodeCounts(encodeCounts([]))).toEqual([]);
  });

  it('writes a key once for all its slots, empty where it has none', () => {
    const slot = (start: number, count: number) => ({ key: 'key_01A', windowMs: 60_000, start, count });
    const spread = [slot(12_000, 2), slot(0, 1), slot(54_000, 7), { ...slot(6_000, 4), key: 'console-sign-in:::1' }];
    const text = encodeCounts(spread);
    expect(text).toBe('%60000 0\nkey_01A 1,,2,,,,,,,7\nconsole-sign-in:::1 ,4');
    expect(decodeCounts(text)).toEqual([slot(0, 1), slot(12_000, 2), slot(54_000, 7), spread[3]]);
  });

  it('reads the form the previous release writes (a line per slot and count)', () => {
    expect(decodeCounts('@60000 1732371600000\n5 key_01A\n360000 key_01C\n@10000 1732371650000\n1 key_01B')).toEqual([
      counts[0],
      counts[2],
      counts[1],
    ]);
  });

  const inWindow = (key: string, count: number) => ({ key, windowMs: 60_000, start: 0, count });
  it.each([
    ['not a string', ['@60000 0', '1 k'], []],
    ['a count before any window', '1 key_01A\n@60000 0\n2 key_01B', [inWindow('key_01B', 2)]],
    ['the counts of a window of 0 ms', '@0 0\n1 key_01A\n@60000 0\n2 key_01B', [inWindow('key_01B', 2)]],
    [
      'lines it cannot read',
      '@60000 0\n-1 key_01A\nx key_01A\n2 key_01B\n3 two words\n@60000\n\n4 key_01C',
      [inWindow('key_01B', 2), inWindow('key_01C', 4)],
    ],
  ])('leaves out %s', (_name, text, expected) => {
    expect(decodeCounts(text)).toEqual(expected);
  });
});
