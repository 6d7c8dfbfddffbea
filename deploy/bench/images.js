'use strict';
// `npm run bench -- images`: records with one image each through the running service (gateway → moderator, the
// bundled model in one image thread), as fast as the service takes them, next to the raw model's rate measured in the
// same run (the same worker module called directly, one thread; BENCH_IMAGE_ROUNDS rounds of each in turn); then
// text-only /moderate at a steady half of its maximum rate, without and with that image load beside it (as many
// rounds of each in turn, the text load from a process of its own), for its p99. Goals: service ≥ 0.8 × raw model; text p99 with image load ≤ 1.5 × without.
const http = require('node:http');
const { crc32 } = require('node:zlib');
// The package's types are its ES module's (`types` points at index.d.mts); require gives the same function.
const sharp = /** @type {typeof import('sharp').default} */ (/** @type {unknown} */ (require('sharp')));
const { startStack, peakRssMb } = require('./stack');
const { quiet } = require('./cost');
const { halfRateText, imagePath, pooled } = require('./beside-images');

const DURATION_S = Number(process.env.BENCH_DURATION_S || 10);
const IMAGE_CONNECTIONS = Number(process.env.BENCH_IMAGE_CONNECTIONS || 4);
const ROUNDS = Number(process.env.BENCH_IMAGE_ROUNDS || 3);

/** The PNG with a tEXt chunk holding `text` inserted before its IEND chunk (the last 12 bytes). */
function withText(png, text) {
  const data = Buffer.concat([Buffer.from('Comment\0', 'latin1'), Buffer.from(text, 'latin1')]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from('tEXt', 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([png.subarray(0, png.length - 12), length, typed, crc, png.subarray(png.length - 12)]);
}

async function imageServer() {
  const random = Buffer.alloc(640 * 480 * 3);
  for (let i = 0; i < random.length; i += 1) random[i] = (i * 7919 + (i >> 7) * 104729) % 256;
  const png = await sharp(random, { raw: { width: 640, height: 480, channels: 3 } })
    .png()
    .toBuffer();
  // Each URL gets bytes of its own (a text chunk naming its path, before IEND), so that the moderator's verdict cache,
  // keyed by the bytes' digest, never answers for the model: every image is decoded and classified.
  const server = http.createServer((req, res) =>
    res.writeHead(200, { 'content-type': 'image/png' }).end(withText(png, req.url ?? '/')),
  );
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return { server, png, base: `http://127.0.0.1:${port}` };
}

/**
 * The worker module called directly, one thread, model loaded and warmed up; `rate(durationS)` gives its images per
 * second, one image after another.
 */
async function rawModel(png) {
  const { OffLoopPool, workerFile } = require('../../moderator/dist/engine');
  const pool = new OffLoopPool({
    filename: workerFile('image-worker'),
    threads: 1,
    tenantThreads: 1,
    maxQueuedPerTenant: 10,
    workerData: { model: 'MobileNetV2Mid' },
  });
  const judge = () => pool.run('raw', 'judge', { bytes: new Uint8Array(png), maxPixels: 4e7 }, { budgetMs: 60000 });
  await pool.run('raw', 'ready', {}, { budgetMs: 300000 });
  for (let i = 0; i < 3; i += 1) await judge();
  return {
    /** @param {number} durationS */
    async rate(durationS) {
      let count = 0;
      const started = performance.now();
      while (performance.now() - started < durationS * 1000) {
        await judge();
        count += 1;
      }
      return { count, seconds: (performance.now() - started) / 1000 };
    },
    close: () => pool.close(),
  };
}

async function main() {
  const images = await imageServer();
  const stack = await startStack({
    services: ['moderator', 'gateway'],
    env: { IMAGE_THREADS: '1', IMAGE_ALLOWED_CIDRS: '127.0.0.0/8' },
  });
  try {
    // Every image flags as Neutral, so that each judged image shows in the answer.
    const { imageLoad } = await imagePath(stack, {
      rules: [
        { id: 'profanity', name: 'Profanity', strategies: [{ type: 'blocklist', profanity: true }] },
        { id: 'images', name: 'Images', strategies: [{ type: 'images', thresholds: { Neutral: 0 } }] },
      ],
      imageUrl: (i) => `${images.base}/image-${i}.png`,
      probe: { image: -1, reason: 'Image 1', what: 'the moderator to judge images (model loaded, rules applied)' },
    });

    // Images the model judged (and answers from the verdict cache, which should be none), from the moderator's metric.
    const outcomes = async () => {
      const text = await (await fetch(`http://127.0.0.1:${stack.adminPorts.moderator}/metrics`)).text();
      const count = (outcome) =>
        Number(new RegExp(`^moderator_images_total\\{outcome="${outcome}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
      return { judged: count('judged'), cached: count('cached') };
    };
    // The raw model and the service in turns, so that both see the same drift of the machine (the raw rate alone
    // moved by a fifth between runs minutes apart); each rate over all its rounds.
    const model = await rawModel(images.png);
    const raws = [];
    const serviceRounds = [];
    let cachedCount = 0;
    /** @type {number[]} */
    const servedP99 = [];
    let servedNon2xx = 0;
    try {
      for (let round = 0; round < ROUNDS; round += 1) {
        raws.push(await model.rate(DURATION_S));
        const before = await outcomes();
        const started = performance.now();
        const served = await imageLoad(1000000 * (round + 1), IMAGE_CONNECTIONS, DURATION_S);
        const seconds = (performance.now() - started) / 1000;
        const after = await outcomes();
        serviceRounds.push({ count: after.judged - before.judged, seconds });
        cachedCount += after.cached - before.cached;
        servedP99.push(served.latency.p99);
        servedNon2xx += served.non2xx;
      }
    } finally {
      await model.close();
    }
    const perSecond = (runs) =>
      runs.reduce((sum, run) => sum + run.count, 0) / runs.reduce((sum, run) => sum + run.seconds, 0);
    const raw = perSecond(raws);
    const serviceRate = perSecond(serviceRounds);
    const perRound = (runs) => runs.map((run) => (run.count / run.seconds).toFixed(1)).join(', ');

    const textOnly = await halfRateText(stack, DURATION_S);
    // Alone and beside image load in turns, so that both see the same drift of the machine; p99 over all rounds. What
    // an image round left (images still queued for the image thread) is done before the next text round alone.
    const alones = [];
    const besides = [];
    // Images judged while the text load ran beside them (the image threads yield to text: IMAGE_YIELD_MS).
    const judgedBeside = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      await quiet(stack);
      alones.push(await textOnly.run());
      const before = await outcomes();
      const started = performance.now();
      const [beside] = await Promise.all([
        textOnly.run(),
        imageLoad(100000 * (round + 1), IMAGE_CONNECTIONS, DURATION_S + 1),
      ]);
      judgedBeside.push({
        count: (await outcomes()).judged - before.judged,
        seconds: (performance.now() - started) / 1000,
      });
      besides.push(beside);
    }
    const alone = pooled(alones);
    const beside = pooled(besides);

    process.stdout.write(
      `\nimages benchmark (${DURATION_S} s runs, nsfwjs MobileNetV2Mid, one image thread, 640 x 480 PNG)\n` +
        `  raw model (worker called directly):      ${raw.toFixed(1)} images/s (per round ${perRound(raws)})\n` +
        `  judged through the service (/moderate, ${IMAGE_CONNECTIONS} conns): ${serviceRate.toFixed(1)} images/s ` +
        `(per round ${perRound(serviceRounds)}), p99 per round ${servedP99.join(', ')} ms, non-2xx ${servedNon2xx}, ` +
        `from the verdict cache ${cachedCount} (ratio ${(serviceRate / raw).toFixed(2)}, goal ≥ 0.8; ${ROUNDS} rounds ` +
        `of each in turn)\n` +
        `  text-only /moderate at ${textOnly.rate} req/s (half of ${textOnly.maxRate}): p99 ${alone.p99} ms alone, ` +
        `${beside.p99} ms beside image load (ratio ${(beside.p99 / Math.max(1, alone.p99)).toFixed(2)}, goal ≤ 1.5; ` +
        `${ROUNDS} rounds of each in turn, p99 per round ${alone.rounds} alone, ${beside.rounds} beside); ` +
        `non-2xx ${alone.non2xx + beside.non2xx}, errors ${alone.errors + beside.errors}; images judged meanwhile ` +
        `${perSecond(judgedBeside).toFixed(1)}/s (per round ${perRound(judgedBeside)})\n` +
        `  peak RSS: moderator ${peakRssMb(stack.pids.moderator)} MB, gateway ${peakRssMb(stack.pids.gateway)} MB\n`,
    );
  } finally {
    await stack.stop();
    images.server.close();
  }
}

module.exports = { main };
