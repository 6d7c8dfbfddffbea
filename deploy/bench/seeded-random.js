'use strict';
// One seeded pseudo-random source for the benchmarks, the labelled sets they generate and the notifier's queue
// simulation (notifier/src/store/testing/sim-store.ts), so that a seed gives the same run, and the same set, every
// time.

/**
 * mulberry32: a small seeded generator of numbers in [0, 1).
 * @param {number} seed
 * @returns {() => number}
 */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

module.exports = { random };
