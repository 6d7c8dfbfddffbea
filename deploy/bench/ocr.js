'use strict';
// `npm run bench -- ocr`: the OCR of `image-text` strategies on its labelled set (deploy/ocr/generate-set.js, 320
// images made at the start of the run), then beside text moderation through the running service.
// 1. Recall: the share of the words a rule would match (deploy/ocr/generate-set.js, ruleWords) that the OCR read, over
//    the set and by kind of image; and seconds per image, warm, one image after another in one OCR process (the
//    moderator's, OcrPool: decoding, scaling and tesseract.js) at normal priority: wall time, and the OCR process's
//    CPU time, which other work on a shared machine does not inflate.
// 2. Text-only /moderate at a steady half of its maximum rate, without and with OCR load beside it (records with one
//    image of the set each and an `image-text` rule, one OCR process under SCHED_IDLE), BENCH_OCR_ROUNDS rounds (8) of
//    each in turn after a warm-up, for its p99: pooled over the rounds, and the median of the rounds' paired ratios;
//    and, as a peer, the same text load beside a busy loop under SCHED_IDLE (any idle-priority work on the machine).
// 3. The same with text first (IMAGE_OCR_TEXT_FIRST: the OCR process stopped while text-only moderations run), on a
//    stack of its own started after the first one: rounds alone and beside OCR in turn, and the OCR process's pauses.
//    BENCH_OCR_TEXT_FIRST=off runs part 2 only, =on part 3 only.
// Goals: recall >= 0.95; <= 0.5 s an image; text p99 with OCR load <= 1.2 x without.
// BENCH_OCR_SKIP_SERVICE=1 runs part 1 only, BENCH_OCR_SKIP_RECALL=1 part 2 only.
const { execFile, spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const { items, render, wordsRead } = require('../ocr/generate-set');
const { startStack, peakRssMb } = require('./stack');
const { quiet, untilIdle } = require('./cost');
const { halfRateText, imagePath, pooled } = require('./beside-images');

const DURATION_S = Number(process.env.BENCH_DURATION_S || 10);
const ROUNDS = Number(process.env.BENCH_OCR_ROUNDS || 8);
const IMAGE_CONNECTIONS = 4;
/** The peer's busy loop: arithmetic on a few registers, no memory to speak of. */
const SPIN = 'let x = 0; for (;;) x = (x * 1.0000001 + 1) % 1e9;';

/** The set's images, rendered once. */
async function renderSet() {
  const started = performance.now();
  const set = [];
  for (const item of items()) set.push({ item, bytes: await render(item) });
  return { set, seconds: (performance.now() - started) / 1000 };
}

/** CPU time a process and all its threads used so far, seconds (Linux /proc; clock ticks of 10 ms). */
function cpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU time of a process's children that ended and were waited for (Linux /proc), seconds. */
function reapedCpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

/** The ids of a process's children (Linux /proc). */
function childPids(pid) {
  return fs
    .readdirSync(`/proc/${pid}/task`)
    .flatMap((tid) => fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(' '))
    .filter((child) => child !== '')
    .map(Number);
}

function commandLine(pid) {
  return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
}

/** Recall and seconds per image through the image worker's `read` task, one thread, one image after another. */
async function recall(set) {
  const { OcrPool } = require('../../moderator/dist/engine');
  const pool = new OcrPool({ processes: 1, maxQueuedPerTenant: 10, priority: 'normal' });
  const read = async (bytes) => {
    const outcome = await pool.read('bench', { bytes: new Uint8Array(bytes), maxPixels: 4e7 }, { budgetMs: 60000 });
    if (!outcome.ok || 'failure' in outcome.value) throw new Error(`read failed: ${JSON.stringify(outcome)}`);
    return outcome.value.text;
  };
  try {
    // Warm: the tesseract worker starts and loads its model on the first read.
    const loadStarted = performance.now();
    await read(set[0].bytes);
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    for (let i = 1; i < 4; i += 1) await read(set[i].bytes);

    /** @type {Record<string, { words: number; read: number; images: number; seconds: number; cpu: number }>} */
    const by = {};
    const count = (key, words, found, seconds, cpu) => {
      const row = (by[key] ??= { words: 0, read: 0, images: 0, seconds: 0, cpu: 0 });
      row.words += words;
      row.read += found;
      row.images += 1;
      row.seconds += seconds;
      row.cpu += cpu;
    };
    const misses = [];
    for (const { item, bytes } of set) {
      const started = performance.now();
      const cpuBefore = cpuSeconds(pool.pids[0]);
      const text = await read(bytes);
      const seconds = (performance.now() - started) / 1000;
      // CPU time of the whole OCR process (its threads: tesseract's, sharp's, V8's): what one
      // image costs a core, whatever else the machine runs.
      const cpu = cpuSeconds(pool.pids[0]) - cpuBefore;
      const found = wordsRead(item.words, text);
      if (found.length < item.words.length)
        misses.push({ id: item.id, missed: item.words.filter((w) => !found.includes(w)), text });
      const keys = [
        'all',
        item.background === 'photo' ? `photo (${item.style})` : 'plain background',
        `font ${item.font.replace(/ (Bold|Italic|Light)$/, '')}`,
        item.size < 24 ? 'text < 24 px' : item.size < 40 ? 'text 24-39 px' : 'text >= 40 px',
      ];
      if (item.rotate !== 0) keys.push('rotated');
      if (item.noisy) keys.push('noisy (grain + JPEG)');
      for (const key of keys) count(key, item.words.length, found.length, seconds, cpu);
    }
    return { by, misses, loadSeconds };
  } finally {
    await pool.close();
  }
}

/** Serves the set's images at /<index>/<anything> (each URL distinct, the bytes of image index mod set size). */
async function imageServer(set) {
  const server = http.createServer((req, res) => {
    const index = Number((req.url ?? '/0').split('/')[1]) % set.length;
    const { item, bytes } = set[index];
    res.writeHead(200, { 'content-type': item.noisy ? 'image/jpeg' : 'image/png' }).end(bytes);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return { server, base: `http://127.0.0.1:${port}` };
}

/**
 * Text-only /moderate p99 at half its maximum, alone and beside OCR load, through gateway and moderator; without text
 * first also beside the busy loop, with it (IMAGE_OCR_TEXT_FIRST) the OCR process's pauses.
 */
async function beside(set, textFirst) {
  const images = await imageServer(set);
  const stack = await startStack({
    services: ['moderator', 'gateway'],
    env: {
      IMAGE_THREADS: '1',
      IMAGE_OCR: 'true',
      IMAGE_ALLOWED_CIDRS: '127.0.0.0/8',
      IMAGE_OCR_TEXT_FIRST: textFirst ? 'true' : 'false',
    },
  });
  try {
    // An image of the set that says "whatsapp": flagged once the OCR reads it.
    const probe = set.findIndex(({ item }) => item.words.includes('whatsapp') && item.background !== 'photo');
    const { imageLoad } = await imagePath(stack, {
      rules: [
        {
          id: 'words',
          name: 'Words',
          strategies: [{ type: 'blocklist', words: ['whatsapp', 'telegram'], profanity: true }],
        },
        { id: 'text-in-images', name: 'Text in images', strategies: [{ type: 'image-text' }] },
      ],
      imageUrl: (i) => `${images.base}/${i}/image.png`,
      probe: { image: probe, reason: "Image 1's text", what: 'the moderator to read text in images (rules applied)' },
    });
    /** The moderator's image texts so far by outcome: `read` and `empty` (read), `timeout`, `budget`, … */
    const outcomes = async () => {
      const text = await (await fetch(`http://127.0.0.1:${stack.adminPorts.moderator}/metrics`)).text();
      return Object.fromEntries(
        [...text.matchAll(/^moderator_image_texts_total\{outcome="(\w+)"\} (\d+)/gm)].map((m) => [m[1], Number(m[2])]),
      );
    };
    /** The OCR process's pauses for text so far: how many by how they ended, and their seconds in all. */
    const pauses = async () => {
      const text = await (await fetch(`http://127.0.0.1:${stack.adminPorts.moderator}/metrics`)).text();
      const count = Object.fromEntries(
        [...text.matchAll(/^moderator_image_ocr_pause_duration_seconds_count\{end="(\w+)"\} (\d+)/gm)].map((m) => [
          m[1],
          Number(m[2]),
        ]),
      );
      const seconds = [...text.matchAll(/^moderator_image_ocr_pause_duration_seconds_sum\{end="\w+"\} ([\d.e+-]+)/gm)]
        .map((m) => Number(m[1]))
        .reduce((sum, value) => sum + value, 0);
      return { count, seconds };
    };
    const reads = async () => {
      const count = await outcomes();
      return (count.read ?? 0) + (count.empty ?? 0);
    };

    const textOnly = await halfRateText(stack, DURATION_S);
    // The OCR processes (the moderator's children; one started again after a reading over its budget is another):
    // their CPU time, the live ones' and the ended ones' that the moderator reaped, and the highest peak RSS seen.
    const ocrPids = () => childPids(stack.pids.moderator).filter((pid) => /ocr-process/.test(commandLine(pid)));
    let ocrPeakMb = 0;
    const ocrCpu = () => {
      const live = ocrPids();
      for (const pid of live) ocrPeakMb = Math.max(ocrPeakMb, peakRssMb(pid) || 0);
      // A process that ends meanwhile counts as reaped, next time.
      const liveCpu = (pid) => {
        try {
          return cpuSeconds(pid);
        } catch {
          return 0;
        }
      };
      return reapedCpuSeconds(stack.pids.moderator) + live.reduce((sum, pid) => sum + liveCpu(pid), 0);
    };
    if (ocrPids().length === 0) throw new Error('no OCR process under the moderator');
    // Readings still queued when a round beside OCR ends go on: the round alone waits until they are done.
    const ocrQuiet = () =>
      untilIdle(() => ocrCpu() * 1000, { windowMs: 1000, maxCores: 0.05, what: 'the OCR process to go quiet' });
    // Warm-up, not counted: the text path at the paced rate once.
    await textOnly.run();
    const outcomesBefore = await outcomes();
    const pausesBefore = await pauses();
    const alones = [];
    const besides = [];
    const readBeside = [];
    const ocrLoad = async (round) => {
      const before = await reads();
      const started = performance.now();
      const cpuBefore = ocrCpu();
      const [withOcr] = await Promise.all([
        textOnly.run(),
        imageLoad(100000 * (round + 1), IMAGE_CONNECTIONS, DURATION_S + 1),
      ]);
      const seconds = (performance.now() - started) / 1000;
      readBeside.push({ count: (await reads()) - before, seconds, cpu: ocrCpu() - cpuBefore });
      return withOcr;
    };
    // The peer: a busy loop with a small working set under SCHED_IDLE, beside the same text load. It takes all the CPU
    // time text moderation leaves, as OCR could, with none of OCR's memory traffic: what any idle-priority work on the
    // machine's other core costs text moderation here (caches, the hypervisor's sharing of the cores).
    const spinLoad = async () => {
      const spinner = spawn('chrt', ['--idle', '0', process.execPath, '-e', SPIN], { stdio: 'ignore' });
      try {
        return await textOnly.run();
      } finally {
        spinner.kill('SIGKILL');
        await new Promise((resolve) =>
          spinner.exitCode === null ? spinner.once('exit', resolve) : resolve(undefined),
        );
      }
    };
    const spins = [];
    // Rounds alone, beside OCR and beside the busy loop in turn, their order turned each round, so that a drift of the
    // machine's other work favours none of them.
    for (let round = 0; round < ROUNDS; round += 1) {
      const kinds = [
        async () => alones.push(await textOnly.run()),
        async () => besides.push(await ocrLoad(round)),
        ...(textFirst ? [] : [async () => spins.push(await spinLoad())]),
      ];
      for (let k = 0; k < kinds.length; k += 1) {
        await ocrQuiet();
        await quiet(stack);
        await kinds[(k + round) % kinds.length]?.();
      }
    }
    const outcomesAfter = await outcomes();
    const pausesAfter = await pauses();
    const imageOutcomes = Object.entries(outcomesAfter)
      .map(([outcome, count]) => `${outcome} ${count - (outcomesBefore[outcome] ?? 0)}`)
      .filter((entry) => !entry.endsWith(' 0'))
      .join(', ');
    const alone = pooled(alones);
    const withLoad = pooled(besides);
    const besideSeconds = readBeside.reduce((sum, run) => sum + run.seconds, 0);
    const readRate = readBeside.reduce((sum, run) => sum + run.count, 0) / besideSeconds;
    const ocrCores = readBeside.reduce((sum, run) => sum + run.cpu, 0) / besideSeconds;
    // The noise of the machine: each round alone against the one before it (no OCR in either).
    const drift = alones
      .slice(1)
      .map((run, i) => run.p99 / Math.max(1, alones[i]?.p99 ?? 1))
      .sort((a, b) => a - b)
      .map((ratio) => ratio.toFixed(2));
    // Each round beside OCR (or the busy loop) against the round alone of the same turn, then the median of those
    // ratios: a burst of other work on a shared machine spoils one pair, where it decides a pooled p99 on its own.
    const pairedWith = (others) => {
      const ratios = alones
        .map((run, i) => (others[i]?.p99 ?? 0) / Math.max(1, run.p99))
        .sort((a, b) => a - b)
        .map((ratio) => ratio.toFixed(2));
      const middle =
        ratios.length % 2
          ? Number(ratios[(ratios.length - 1) / 2])
          : (Number(ratios[ratios.length / 2 - 1]) + Number(ratios[ratios.length / 2])) / 2;
      return { ratios, median: middle };
    };
    const { ratios: paired, median } = pairedWith(besides);
    const spin = pooled(spins);
    const spinPaired = pairedWith(spins);
    const pausesBy = Object.entries(pausesAfter.count)
      .map(([end, count]) => `${end} ${count - (pausesBefore.count[end] ?? 0)}`)
      .join(', ');
    const pausedShare = (pausesAfter.seconds - pausesBefore.seconds) / besideSeconds;
    const peer = textFirst
      ? `  text first: the OCR process paused ${(pausedShare * 100).toFixed(0)} % of the time beside OCR load; ` +
        `pauses by how they ended: ${pausesBy}\n`
      : `  peer, beside a busy loop under SCHED_IDLE instead: p99 ${spin.p99} ms (ratio ` +
        `${(spin.p99 / Math.max(1, alone.p99)).toFixed(2)}; per round ${spin.rounds}); ratio of paired rounds: median ` +
        `${spinPaired.median.toFixed(2)} (${spinPaired.ratios.join(', ')})\n`;
    return (
      `  text-only /moderate at ${textOnly.rate} req/s (half of ${textOnly.maxRate}): p99 ${alone.p99} ms ` +
      `alone, ${withLoad.p99} ms beside OCR load${textFirst ? ', text first' : ''} ` +
      `(ratio ${(withLoad.p99 / Math.max(1, alone.p99)).toFixed(2)}, goal ` +
      `≤ 1.2; ${ROUNDS} rounds of each in turn, p99 per round ${alone.rounds} alone, ${withLoad.rounds} beside); ` +
      `ratio of paired rounds: median ${median.toFixed(2)} (${paired.join(', ')}); ` +
      `non-2xx ${alone.non2xx + withLoad.non2xx}; images read meanwhile ${readRate.toFixed(1)}/s, the OCR process ` +
      `using ${ocrCores.toFixed(2)} cores (SCHED_IDLE); image texts by outcome: ${imageOutcomes}\n` +
      peer +
      `  noise: each round alone against the round alone before it, ratio ${drift.join(', ')}\n` +
      `  peak RSS: moderator ${peakRssMb(stack.pids.moderator)} MB, its OCR process ${ocrPeakMb} MB, ` +
      `gateway ${peakRssMb(stack.pids.gateway)} MB\n`
    );
  } finally {
    await stack.stop();
    images.server.close();
  }
}

async function main() {
  const { set, seconds } = await renderSet();
  process.stdout.write(`${set.length} images rendered in ${seconds.toFixed(1)} s\n`);
  if (!process.env.BENCH_OCR_SKIP_RECALL) await recallTable(set);
  if (process.env.BENCH_OCR_SKIP_SERVICE) return;
  const [loadBefore = 0] = os.loadavg();
  const which = process.env.BENCH_OCR_TEXT_FIRST || 'both';
  if (which !== 'on') {
    process.stdout.write(`\nOCR beside text moderation (${DURATION_S} s runs, one OCR process under SCHED_IDLE)\n`);
    process.stdout.write(await beside(set, false));
    process.stdout.write(`  load average (1 min): ${(os.loadavg()[0] ?? 0).toFixed(1)}\n`);
  }
  if (which !== 'off') {
    process.stdout.write(
      `\nOCR beside text moderation, text first (${DURATION_S} s runs, one OCR process under SCHED_IDLE, stopped ` +
        `while text-only moderations run), on a stack of its own\n`,
    );
    process.stdout.write(await beside(set, true));
    process.stdout.write(`  load average (1 min): ${(os.loadavg()[0] ?? 0).toFixed(1)}\n`);
  }
  process.stdout.write(await coreSharing());
  process.stdout.write(
    `  load average (1 min): ${loadBefore.toFixed(1)} before, ${(os.loadavg()[0] ?? 0).toFixed(1)} after\n`,
  );
}

/**
 * What the machine's cores share: a fixed piece of work (hashing and sorting, a few milliseconds) timed by its own CPU
 * time in a process of its own, alone and then beside the busy loop under SCHED_IDLE. The scheduler never lets the
 * loop take the work's CPU time, so any rise is the cores slowing each other (hyperthreads of one physical core,
 * shared caches): a cost no scheduling policy inside the machine removes.
 */
async function coreSharing() {
  const JOB =
    "const { createHash } = require('node:crypto'); const buf = Buffer.alloc(65536, 7); const cpu = [];" +
    'for (let n = 0; n < 300; n += 1) { const c0 = process.cpuUsage();' +
    " for (let i = 0; i < 60; i += 1) createHash('sha256').update(buf).digest();" +
    ' const a = Array.from({ length: 20000 }, (_, i) => ({ i })); a.sort((x, y) => y.i - x.i);' +
    ' const c = process.cpuUsage(c0); cpu.push((c.user + c.system) / 1000);' +
    ' const until = Date.now() + 3; while (Date.now() < until); }' +
    ' cpu.sort((x, y) => x - y); process.stdout.write(String(cpu[150]));';
  const medianMs = () =>
    new Promise((resolve, reject) =>
      execFile(process.execPath, ['-e', JOB], (err, stdout) => (err ? reject(err) : resolve(Number(stdout)))),
    );
  const alone = /** @type {number} */ (await medianMs());
  const spinner = spawn('chrt', ['--idle', '0', process.execPath, '-e', SPIN], { stdio: 'ignore' });
  try {
    const besideLoop = /** @type {number} */ (await medianMs());
    return (
      `  the cores: a fixed job's CPU time, median of 300, ${alone.toFixed(2)} ms alone and ${besideLoop.toFixed(2)} ms ` +
      `beside the busy loop under SCHED_IDLE (${(besideLoop / alone).toFixed(2)}×)\n`
    );
  } finally {
    spinner.kill('SIGKILL');
  }
}

/** Part 1: recall and seconds an image, as a table by kind of image. */
async function recallTable(set) {
  const [loadBefore = 0] = os.loadavg();
  const { by, misses, loadSeconds } = await recall(set);
  const rows = Object.fromEntries(
    Object.entries(by).map(([key, row]) => [
      key,
      {
        images: row.images,
        words: row.words,
        recall: (row.read / row.words).toFixed(3),
        's/image': (row.seconds / row.images).toFixed(3),
        'CPU s/image': (row.cpu / row.images).toFixed(3),
      },
    ]),
  );
  process.stdout.write(
    `\nLoad average (1 min) before the readings: ${loadBefore.toFixed(1)}; after: ${(os.loadavg()[0] ?? 0).toFixed(1)}` +
      `\nOCR on the labelled set (tesseract.js 7, eng best_int, one OCR process at normal priority, warm; first read ` +
      `with model load ${loadSeconds.toFixed(2)} s). Goals: recall ≥ 0.95, ≤ 0.5 s an image\n`,
  );
  console.table(rows); // eslint-disable-line no-console
  if (process.env.BENCH_OCR_MISSES) {
    for (const miss of misses) process.stdout.write(`${miss.id}: missed ${miss.missed.join(', ')} in "${miss.text}"\n`);
  }
}

module.exports = { main };
