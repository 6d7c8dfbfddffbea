// Reading the transparency counters: a period's trees of counters summed by path, and the median of a time histogram.
import type { CountTree } from '@vigil/proto';

/** The median of a histogram of time buckets, in seconds (the mean of the two middle values when even); null if empty. */
export function medianOfBuckets(buckets: ReadonlyMap<string, number>): number | null {
  const sorted = [...buckets.entries()]
    .map(([key, count]) => [Number(key.slice(1)), count] as const)
    .filter(([seconds, count]) => Number.isFinite(seconds) && count > 0)
    .sort(([a], [b]) => a - b);
  const total = sorted.reduce((sum, [, count]) => sum + count, 0);
  if (total === 0) return null;
  const valueAt = (rank: number): number => {
    let seen = 0;
    for (const [seconds, count] of sorted) {
      seen += count;
      if (rank < seen) return seconds;
    }
    return sorted[sorted.length - 1]![0];
  };
  return total % 2 === 1 ? valueAt((total - 1) / 2) : (valueAt(total / 2 - 1) + valueAt(total / 2)) / 2;
}

/** Every counter of a tree, by its dotted path. */
export function flattenCounts(
  tree: CountTree | undefined,
  into = new Map<string, number>(),
  prefix = '',
): Map<string, number> {
  for (const [key, value] of Object.entries(tree ?? {})) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    if (typeof value === 'number') into.set(path, (into.get(path) ?? 0) + value);
    else if (value && typeof value === 'object') flattenCounts(value, into, path);
  }
  return into;
}
