'use strict';

/** The `p`th percentile of `sorted` (ascending), nearest rank; NaN when empty. */
function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

module.exports = { percentile };
