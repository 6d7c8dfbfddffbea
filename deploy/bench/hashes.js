'use strict';
// `npm run bench -- hashes [sizes]`: a tenant's bank index as the moderator holds it (moderator/src/hash-banks/
// bank-index.ts: one PDQ bank at distance 31 in a multi-index), in process on one thread, so lookups/s is per core.
// Beside it, from the same run, its peer: a linear scan of the same hashes.
// Sizes default to 1M and 10M hashes (`npm run bench -- hashes 1000000` for one). Keys are hash ids as the store
// makes them (`hsh_` and 22 base64url characters, here from a seeded generator), so memory per million counts them.
// Printed per size:
// - lookups per CPU second (this process's; the machine is shared) for exact queries (a stored hash) and near ones
//   (a stored hash with 1 to 31 random bits flipped) at distance 31, and the scan's;
// - memory per million hashes: the heap and array buffers after a full collection, before and after the build, and
//   the bytes of the index's typed arrays as a cross-check;
// - the time from adding a hash to the index to a lookup finding it (median and maximum of 20);
// - recall on 10,000 near duplicates of real photos (the PDQ fixtures), resized, recompressed and lightly cropped
//   with sharp, their originals among the bank's hashes: every copy within 31 of its original must find it. Copies
//   that an edit moved further than 31 are counted apart: that is the hash's robustness, not the index's recall.
//   `BENCH_NEAR_DUPLICATES` (10,000) sets how many copies, for a short run.
// First, once: the time from adding a hash through the store (HashBankStore: the hash and a numbered change) to
// another replica's index (BankIndexes) matching it, on a bank in MONGO_URL (servers are started when it is unset).
// Goals (docs/hash-banks.md): >= 500 lookups/s at 1M and >= 100 at 10M per core, <= 150 MB per million, add to match
// <= 1 s, recall 100 %.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const v8 = require('node:v8');
const vm = require('node:vm');
const sharp = /** @type {typeof import('sharp').default} */ (/** @type {unknown} */ (require('sharp')));
const { BankIndex } = require('../../moderator/dist/hash-banks/bank-index');
const { imageHashes } = require('../../moderator/dist/engine/images/image-hashes');
const { hammingDistance } = require('../../moderator/dist/engine/images/pdq/hamming');
const { random } = require('./seeded-random');
const { percentile } = require('./percentile');

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

const DISTANCE = 31;
const NEAR_DUPLICATES = Number(process.env.BENCH_NEAR_DUPLICATES || 10_000);
const ADDS = 20;
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const PHOTOS = path.join(__dirname, '../../moderator/src/engine/images/pdq/fixtures/photos');
/**
 * The distinct photos among the fixtures whose PDQ quality is at least 50 (below it, ThreatExchange advises not to
 * match): the bridge and its rotated copy (1600 × 1004), a 34 × 42 thumbnail and five 256 × 256 LabelMe photos.
 */
const ORIGINALS = [
  'bridge-mods/aaa-orig.jpg',
  'reg-test-input/dih/bridge-2-rotate-90.jpg',
  'misc-images/wee.jpg',
  ...['q0122', 'q0291', 'q0746', 'q1050', 'q2821'].map((name) => `reg-test-input/labelme-subset/${name}.jpg`),
];
const EDITS = ['resized', 'recompressed', 'cropped', 'all three'];

/** @param {() => number} next */
function randomHash(next) {
  let hex = '';
  for (let i = 0; i < 8; i += 1)
    hex += Math.floor(next() * 2 ** 32)
      .toString(16)
      .padStart(8, '0');
  return hex;
}

/** A hash id shaped as the store's (hash-bank-store.ts, hashIdOf), without a Buffer per id. @param {() => number} next */
function randomId(next) {
  let id = 'hsh_';
  for (let i = 0; i < 22; i += 1) id += BASE64URL.charAt(Math.floor(next() * 64));
  return id;
}

/** `hex` with `bits` distinct random bits flipped. @param {string} hex @param {number} bits @param {() => number} next */
function flipped(hex, bits, next) {
  const digits = hex.split('').map((digit) => Number.parseInt(digit, 16));
  const chosen = new Set();
  while (chosen.size < bits) chosen.add(Math.floor(next() * 256));
  for (const bit of chosen) digits[bit >> 2] = Number(digits[bit >> 2]) ^ (8 >> (bit & 3));
  return digits.map((digit) => digit.toString(16)).join('');
}

/** Heap and array buffers after full collections (array buffers are freed by a task after the collection). */
async function memory() {
  for (let i = 0; i < 3; i += 1) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

/** Lookups per second of this process's CPU time (the machine is shared: wall time would count others' work). */
function rate(queries, run) {
  const started = process.cpuUsage();
  for (const query of queries) run(query);
  const used = process.cpuUsage(started);
  return queries.length / ((used.user + used.system) / 1e6);
}

/** @param {number[]} values */
const median = (values) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

const perMillion = (bytes, size) => (((bytes / size) * 1e6) / 1024 / 1024).toFixed(0);

/**
 * The near-duplicate set: each original's PDQ hash, and 10,000 copies (one edit kind in turn), each hashed by the
 * moderator's own path (imageHashes) from the bytes sharp wrote.
 */
async function nearDuplicates() {
  const next = random(43);
  const started = process.cpuUsage();
  const originals = [];
  for (const file of ORIGINALS) {
    const bytes = fs.readFileSync(path.join(PHOTOS, file));
    const { width, height } = await sharp(bytes).metadata();
    const hashes = await imageHashes(bytes, { maxPixels: 50_000_000 });
    if (!hashes.pdq || !width || !height) throw new Error(`${file}: no PDQ hash`);
    originals.push({ file, bytes, width, height, pdq: hashes.pdq.hash, quality: hashes.pdq.quality });
  }
  const copies = [];
  for (let i = 0; i < NEAR_DUPLICATES; i += 1) {
    const of = i % originals.length;
    const { bytes, width, height, pdq } = /** @type {(typeof originals)[number]} */ (originals[of]);
    const edit = EDITS[Math.floor(i / originals.length) % EDITS.length];
    let image = sharp(bytes);
    if (edit === 'cropped' || edit === 'all three') {
      // Lightly cropped: up to 2 % of each side in all, split at random between the two edges.
      const cropX = Math.floor(width * 0.02 * next());
      const cropY = Math.floor(height * 0.02 * next());
      const left = Math.floor(cropX * next());
      const top = Math.floor(cropY * next());
      image = image.extract({ left, top, width: width - cropX, height: height - cropY });
    }
    if (edit === 'resized' || edit === 'all three') {
      image = image.resize({ width: Math.max(32, Math.round(width * (0.5 + next() * 0.5))) });
    }
    // Recompressed at JPEG quality 50 to 95; the others at 95, as a re-post would be saved.
    const quality = edit === 'recompressed' || edit === 'all three' ? 50 + Math.floor(next() * 46) : 95;
    const copy = await image.jpeg({ quality }).toBuffer();
    const hashes = await imageHashes(copy, { maxPixels: 50_000_000 });
    if (!hashes.pdq) throw new Error(`copy ${i}: no PDQ hash`);
    copies.push({ of, edit, pdq: hashes.pdq.hash, distance: hammingDistance(pdq, hashes.pdq.hash) });
  }
  const used = process.cpuUsage(started);
  return { originals, copies, cpuSeconds: (used.user + used.system) / 1e6 };
}

/** @param {number} size @param {Awaited<ReturnType<typeof nearDuplicates>>} set */
async function benchSize(size, set) {
  const next = random(size);
  const before = await memory();
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
  const originalIds = set.originals.map(() => randomId(next));
  const stored = [];
  const started = process.cpuUsage();
  for (let i = 0; i < size; i += 1) {
    const hex = randomHash(next);
    index.putHash({ id: randomId(next), bankId: 'bnk_bench', value: hex });
    if (i % Math.max(1, Math.floor(size / 20_000)) === 0) stored.push(hex);
  }
  set.originals.forEach((original, i) =>
    index.putHash({ id: String(originalIds[i]), bankId: 'bnk_bench', value: original.pdq }),
  );
  const build = process.cpuUsage(started);
  const bytes = (await memory()) - before;

  const exact = stored.slice(0, 2000);
  const near = stored.slice(0, 2000).map((hex) => flipped(hex, 1 + Math.floor(next() * DISTANCE), next));
  const scanQueries = near.slice(0, size >= 5_000_000 ? 5 : 20);
  const lookup = (query) => index.match({ pdq: query }).matches;
  // The linear scan over the very same hashes (the index's own typed arrays), as a matcher without an index does.
  const scan = (query) => index.scanPdq(query, DISTANCE);
  for (const query of exact.slice(0, 100)) lookup(query);

  // Recall on bit flips: 10,000 stored hashes with 0 to 31 random bits flipped, each must find its original.
  let flipsFound = 0;
  for (let i = 0; i < 10_000; i += 1) {
    const copy = flipped(String(stored[i % stored.length]), Math.floor(next() * (DISTANCE + 1)), next);
    if (lookup(copy).length > 0) flipsFound += 1;
  }
  // Recall on near duplicates: a copy within the distance of its original must find it.
  let within = 0;
  let found = 0;
  for (const copy of set.copies) {
    if (copy.distance > DISTANCE) continue;
    within += 1;
    if (lookup(copy.pdq).some((hit) => hit.hashId === originalIds[copy.of])) found += 1;
  }

  // Adding a hash and matching it: in place, whatever the size.
  const addMs = [];
  for (let i = 0; i < ADDS; i += 1) {
    const fresh = randomHash(next);
    const id = randomId(next);
    const query = flipped(fresh, 5, next);
    const addStarted = performance.now();
    index.putHash({ id, bankId: 'bnk_bench', value: fresh });
    if (!lookup(query).some((hit) => hit.hashId === id)) throw new Error('an added hash did not match');
    addMs.push(performance.now() - addStarted);
  }

  return {
    hashes: size.toLocaleString('en'),
    'build (CPU s)': ((build.user + build.system) / 1e6).toFixed(0),
    'exact lookups/s': Math.round(rate(exact, lookup)),
    'near lookups/s': Math.round(rate(near, lookup)),
    'scan lookups/s (peer)': rate(scanQueries, scan).toFixed(1),
    'MB per million': perMillion(bytes, size),
    'typed arrays, MB per million': perMillion(index.pdqByteLength, size),
    'add to match, median (ms)': median(addMs).toFixed(2),
    'add to match, max (ms)': Math.max(...addMs).toFixed(2),
    'recall, bit flips': `${((100 * flipsFound) / 10_000).toFixed(2)} %`,
    'recall, near duplicates': `${((100 * found) / within).toFixed(2)} %`,
  };
}

/** Adds hashes through the store and times until a second replica's index matches each. */
async function throughTheStore() {
  const { MongoClient } = require('mongodb');
  const { HashBankStore } = require('../../moderator/dist/hash-banks/hash-bank-store');
  const { BankIndexes } = require('../../moderator/dist/hash-banks/bank-indexes');
  let servers;
  let url = process.env.MONGO_URL;
  if (!url) {
    const { startServers, freshDir } = require('../local/servers');
    servers = await startServers({ dir: freshDir('bench-hashes'), ephemeral: true });
    url = servers.mongoUrl;
  }
  const client = await MongoClient.connect(url, { serverSelectionTimeoutMS: 30_000, socketTimeoutMS: 60_000 });
  const db = client.db(`vigil_bench_hashes_${process.pid}`);
  try {
    const store = new HashBankStore(db);
    await store.ensureIndexes();
    const tenantId = 'ten_bench_hashes';
    const bank = await store.createBank(tenantId, {
      name: 'bench',
      kind: 'pdq',
      distance: DISTANCE,
      action: 'flag',
      negative: false,
      enabled: true,
    });
    const writer = new BankIndexes(store, 600_000);
    const reader = new BankIndexes(store, 600_000);
    await writer.current(tenantId);
    await reader.current(tenantId);
    const next = random(7);
    const times = [];
    for (let i = 0; i < ADDS; i += 1) {
      const fresh = randomHash(next);
      const query = flipped(fresh, 5, next);
      const started = performance.now();
      const { added } = await store.addHashes(tenantId, bank._id, [{ value: fresh, metadata: {} }]);
      const id = added[0]?._id;
      for (;;) {
        const index = await reader.current(tenantId);
        if (index.match({ pdq: query }).matches.some((hit) => hit.hashId === id)) break;
        if (performance.now() - started > 10_000) throw new Error('a hash added through the store never matched');
      }
      times.push(performance.now() - started);
    }
    return times;
  } finally {
    await db.dropDatabase();
    await client.close();
    if (servers) await servers.stop();
  }
}

async function main() {
  const arg = process.argv[3];
  const sizes = arg ? arg.split(',').map(Number) : [1_000_000, 10_000_000];
  const out = process.stdout;
  const load = os.loadavg();
  out.write(`Load average at the start: ${load.map((value) => value.toFixed(1)).join(', ')} (2 cores).\n`);
  // First the store, which needs a server, so that the in-process figures below do not wait on it.
  const stored = await throughTheStore();
  out.write(
    `Add through the store to a match in another replica (HashBankStore + BankIndexes), ${ADDS} adds: ` +
      `median ${median(stored).toFixed(0)} ms, max ${Math.max(...stored).toFixed(0)} ms.\n`,
  );
  const set = await nearDuplicates();
  out.write(
    `Near duplicates: ${set.copies.length.toLocaleString('en')} copies of ${set.originals.length} photos ` +
      `(PDQ quality ${set.originals.map((original) => original.quality).join(', ')}), hashed in ` +
      `${set.cpuSeconds.toFixed(0)} CPU s. Share within ${DISTANCE} of the original, by edit:\n`,
  );
  // eslint-disable-next-line no-console
  console.table(
    EDITS.map((edit) => {
      const copies = set.copies.filter((copy) => copy.edit === edit);
      const within = copies.filter((copy) => copy.distance <= DISTANCE).length;
      return {
        edit,
        copies: copies.length,
        [`within ${DISTANCE}`]: `${((100 * within) / copies.length).toFixed(1)} %`,
        'median distance': median(copies.map((copy) => copy.distance)),
        'max distance': Math.max(...copies.map((copy) => copy.distance)),
      };
    }),
  );
  const rows = [];
  for (const size of sizes) {
    rows.push(await benchSize(size, set));
    gc();
    out.write(
      'Bank index (PDQ multi-index, 16 × 16-bit chunks) beside a linear scan of the same hashes, one thread:\n',
    );
    console.table(rows); // eslint-disable-line no-console
  }
}

module.exports = { main };
