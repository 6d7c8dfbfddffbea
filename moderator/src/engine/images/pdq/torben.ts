/**
 * The median by Torben Mogensen's method (no sorting, no copy), as the reference computes it: for an even count, the
 * lower middle value. The values are single-precision floats, and so is every midpoint taken.
 */
export function torbenMedian(values: Float32Array): number {
  const n = values.length;
  if (n === 0) throw new RangeError('median of no values');
  let min = values[0]!;
  let max = min;
  for (const value of values) {
    if (value < min) min = value;
    if (value > max) max = value;
  }
  const half = Math.floor((n + 1) / 2);
  for (;;) {
    const guess = Math.fround(Math.fround(min + max) / 2);
    let less = 0;
    let greater = 0;
    let equal = 0;
    let maxBelow = min;
    let minAbove = max;
    for (const value of values) {
      if (value < guess) {
        less++;
        if (value > maxBelow) maxBelow = value;
      } else if (value > guess) {
        greater++;
        if (value < minAbove) minAbove = value;
      } else {
        equal++;
      }
    }
    if (less <= half && greater <= half) {
      if (less >= half) return maxBelow;
      if (less + equal >= half) return guess;
      return minAbove;
    }
    if (less > greater) max = maxBelow;
    else min = minAbove;
  }
}
