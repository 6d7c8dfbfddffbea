import { decodeCounts, encodeCounts } from './rate-limit-store';

const counts = [
  { key: 'key_01A', windowMs: 60_000, start: 1_732_371_600_000, count: 5 },
  { key: 'key_01B', windowMs: 10_000, start: 1_732_371_650_000, count: 1 },
  { key: 'key_01C', windowMs: 60_000, start: 1_732_371_600_000, count: 360_000 },
];

describe('rate limit counts as stored', () => {
  it('writes one line per window and per count, and reads the same counts back', () => {
    const text = encodeCounts(counts);
    expect(text).toBe('@60000 1732371600000\n5 key_01A\n360000 key_01C\n@10000 1732371650000\n1 key_01B');
    expect(decodeCounts(text)).toEqual([counts[0], counts[2], counts[1]]);
    expect(decodeCounts(encodeCounts([]))).toEqual([]);
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
