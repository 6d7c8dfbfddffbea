'use strict';
// `npm run bench -- hashes [sizes]`: a tenant's bank index as the moderator holds it (moderator/src/hash-banks/
// bank-index.ts: one PDQ bank at distance 31 in a multi-index), in process on one thread, so lookups/s is per core. Beside it, from the same run, its peer: a linear scan of the same hashes.
// Sizes default to 1M and 10M hashes (`npm run bench -- hashes 1000000` for one). Keys are hash ids as the moderator
// makes them (`hsh_` and 22 characters), so memory per million counts them too.
// Printed per size: lookups per CPU second (this process's; the machine is shared) for exact and near queries (a stored hash with 1 to 31 random bits flipped) at distance
// 31, the scan's lookups/s, memory per million hashes, the time to add one hash and match it, and recall on 10,000
// near duplicates (each must find its original).
// Goals (docs/hash-banks.md): >= 500 lookups/s at 1M and >= 100 at 10M per core, <= 150 MB per million, recall 100 %.
const { performance } = require('node:perf_hooks');
const v8 = require('node:v8');
const vm = require('node:vm');
const { randomBytes } = require('node:crypto');
const { BankIndex } = require('../../moderator/dist/hash-banks/bank-index');
const { random } = require('./seeded-random');

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

const DISTANCE = 31;

function randomHash(next) {
  let hex = '';
  for (let i = 0; i < 8; i += 1)
    hex += Math.floor(next() * 2 ** 32)
      .toString(16)
      .padStart(8, '0');
  return hex;
}

/** `hex` with `bits` distinct random bits flipped. */
function flipped(hex, bits, next) {
  const digits = hex.split('').map((digit) => Number.parseInt(digit, 16));
  const chosen = new Set();
  while (chosen.size < bits) chosen.add(Math.floor(next() * 256));
  for (const bit of chosen) digits[bit >> 2] ^= 8 >> (bit & 3);
  return digits.map((digit) => digit.toString(16)).join('');
}

function memory() {
  gc();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

/** Lookups per second of this thread's CPU time (the machine is shared: wall time would count others' work). */
function rate(queries, run) {
  const started = process.cpuUsage();
  for (const query of queries) run(query);
  const used = process.cpuUsage(started);
  return queries.length / ((used.user + used.system) / 1e6);
}

function benchSize(size) {
  const next = random(size);
  const before = memory();
  const index = new BankIndex();
  index.putBank({
    id: 'bnk_bench',
    name: 'bench',
    kind: 'pdq',
    distance: DISTANCE,
    negative: false,
    enabled: true,
    action: 'flag',
  });
  const stored = [];
  const started = performance.now();
  for (let i = 0; i < size; i += 1) {
    const hex = randomHash(next);
    index.putHash({ id: `hsh_${randomBytes(16).toString('base64url').slice(0, 22)}`, bankId: 'bnk_bench', value: hex });
    if (i % Math.max(1, Math.floor(size / 20_000)) === 0) stored.push(hex);
  }
  const buildSeconds = (performance.now() - started) / 1000;
  const bytes = memory() - before;

  const exact = stored.slice(0, 2000);
  const near = stored.slice(0, 2000).map((hex) => flipped(hex, 1 + Math.floor(next() * DISTANCE), next));
  const scanQueries = near.slice(0, size >= 5_000_000 ? 5 : 20);
  const lookup = (query) => index.match({ pdq: query }).matches;
  // The linear scan over the very same hashes (the index's own typed arrays), as a matcher without an index does.
  const scan = (query) => index.scanPdq(query, DISTANCE);
  for (const query of exact.slice(0, 100)) lookup(query);

  // Recall: 10,000 near duplicates (0 to 31 bits away), each must find its original.
  let found = 0;
  const recallSet = Array.from({ length: 10_000 }, (_, i) => stored[i % stored.length]);
  for (const original of recallSet) {
    const copy = flipped(original, Math.floor(next() * (DISTANCE + 1)), next);
    if (lookup(copy).length > 0) found += 1;
  }

  // Adding a hash and matching it: in place, whatever the size.
  const fresh = randomHash(next);
  const addStarted = performance.now();
  index.putHash({ id: 'hsh_new', bankId: 'bnk_bench', value: fresh });
  const matched = lookup(flipped(fresh, 5, next)).some((hit) => hit.hashId === 'hsh_new');
  const addMs = performance.now() - addStarted;

  return {
    hashes: size.toLocaleString('en'),
    'build (s)': buildSeconds.toFixed(1),
    'exact lookups/s': Math.round(rate(exact, lookup)),
    'near lookups/s': Math.round(rate(near, lookup)),
    'scan lookups/s (peer)': rate(scanQueries, scan).toFixed(1),
    'MB per million': (((bytes / size) * 1e6) / 1024 / 1024).toFixed(0),
    'add to match (ms)': matched ? addMs.toFixed(3) : 'not matched',
    'recall at 31': `${((100 * found) / recallSet.length).toFixed(2)} %`,
  };
}

async function main() {
  const arg = process.argv[3];
  const sizes = arg ? arg.split(',').map(Number) : [1_000_000, 10_000_000];
  const rows = [];
  for (const size of sizes) {
    rows.push(benchSize(size));
    gc();
  }
  process.stdout.write(
    'Bank index (PDQ multi-index, 16 × 16-bit chunks) beside a linear scan of the same hashes, one thread:\n',
  );
  console.table(rows); // eslint-disable-line no-console
}

module.exports = { main };
