'use strict';
// `npm run bench -- noisy`: a noisy neighbour. Tenant A has the heaviest rule set the budget admits (20 patterns of
// 482 RE2 instructions, 1,000 whole words, profanity) and sends 100,000-character records as fast as it can; tenant B
// sends ~1 KB records to /moderate at a steady rate and reads its records one after another. B's p99 is taken alone
// and beside A in turn (BENCH_NOISY_ROUNDS rounds of each), over all rounds; A's load runs in a process of its own.
// Goal: B's p99 beside A ≤ 2 × alone (issue 21), and no error.
const path = require('node:path');
const { setInterval } = require('node:timers/promises');
const { ROOT, run } = require('../local/util');
const { startStack } = require('./stack');
const { paced } = require('./paced');
const { percentile } = require('./percentile');
const { quiet } = require('./cost');

const DURATION_S = Number(process.env.BENCH_DURATION_S || 10);
/** Rounds of B alone and beside A, in turn. */
const ROUNDS = Number(process.env.BENCH_NOISY_ROUNDS || 3);
const RATE = Number(process.env.BENCH_RATE || 20);
const NOISY_CONNECTIONS = Number(process.env.BENCH_NOISY_CONNECTIONS || 8);
const NOISY_RATE = Number(process.env.BENCH_NOISY_RATE || 0);
/** BENCH_NOISY_RULES=default: tenant A keeps the default rule set (a control: the same records, cheap checks). */
const HEAVY_RULES = process.env.BENCH_NOISY_RULES !== 'default';

async function newKey(stack, name) {
  const cli = path.join(ROOT, 'gateway', 'dist', 'admin', 'cli.js');
  const env = { ...process.env, MONGO_URL: stack.servers.mongoUrl, MONGO_DB: stack.common.MONGO_DB };
  await run(process.execPath, [cli, 'tenant', 'create', name], { env });
  const out = await run(process.execPath, [cli, 'key', 'create', name], { env });
  const key = (/vgl_[0-9a-f]+/.exec(out) || [])[0];
  if (!key) throw new Error('admin CLI printed no key');
  return key;
}

/** GETs `url` one after another for `durationS`; latency percentiles and failures. */
async function reads(url, headers, durationS) {
  const latencies = [];
  let failed = 0;
  const started = performance.now();
  while (performance.now() - started < durationS * 1000) {
    const at = performance.now();
    const res = await fetch(url, { headers }).catch(() => null);
    if (!res || res.status !== 200) failed += 1;
    await res?.arrayBuffer();
    latencies.push(performance.now() - at);
  }
  latencies.sort((a, b) => a - b);
  return {
    count: latencies.length,
    p50: Math.round(percentile(latencies, 50)),
    p99: Math.round(percentile(latencies, 99)),
    failed,
    latencies,
  };
}

/** Polls `url` (a /livez) every 200 ms until `until` settles: answers, failures (none within 1 s), slowest answer. */
async function probe(url, until) {
  let stop = false;
  void until.finally(() => (stop = true));
  let answered = 0;
  let failed = 0;
  let slowest = 0;
  // One probe per 200 ms tick (the interval's iterator), whatever each answer took.
  const ticks = setInterval(200)[Symbol.asyncIterator]();
  while (!stop) {
    const at = performance.now();
    const res = await fetch(url, { signal: AbortSignal.timeout(1000) }).catch(() => null);
    if (res?.status === 200) answered += 1;
    else failed += 1;
    await res?.arrayBuffer();
    slowest = Math.max(slowest, performance.now() - at);
    await ticks.next();
  }
  await ticks.return?.();
  return { answered, failed, slowest: Math.round(slowest) };
}

async function quietTenant(api, key) {
  const headers = { authorization: `Bearer ${key}` };
  const body = (i) => ({
    clientId: `quiet-${i % 1000}`,
    name: `Post ${i}`,
    entity: 'post',
    content: 'a quiet afternoon by the river, with coffee and music '.repeat(18),
  });
  const [moderate, read] = await Promise.all([
    paced(`${api}/moderate`, { body, headers, rate: RATE, durationS: DURATION_S, connections: 8 }),
    reads(`${api}/records?limit=1`, headers, DURATION_S),
  ]);
  return { moderate, read };
}

async function main() {
  const stack = await startStack({ services: ['moderator', 'gateway'] });
  try {
    const api = `http://127.0.0.1:${stack.ports.gateway}/api/v1`;
    const noisyKey = stack.apiKey;
    const quietKey = await newKey(stack, `quiet${Date.now()}`);
    const heavy = {
      rules: [
        {
          id: 'patterns',
          name: 'patterns',
          strategies: [{ type: 'patterns', patterns: Array.from({ length: 20 }, (_, i) => `[a-z]{1,240}${i}q`) }],
        },
        {
          id: 'words',
          name: 'words',
          strategies: [
            {
              type: 'blocklist',
              words: Array.from({ length: 1000 }, (_, i) => `word${i}`),
              wholeWord: true,
              profanity: true,
            },
          ],
        },
      ],
    };
    if (HEAVY_RULES) {
      const put = await fetch(`${api}/rules`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${noisyKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(heavy),
      });
      if (put.status !== 200) throw new Error(`PUT /rules answered ${put.status}`);
    }

    await quietTenant(api, quietKey); // warm-up
    // Alone and beside A in turn, ROUNDS of each, the p99 taken over all rounds: one round's p99 moves by a factor of
    // two between runs.
    /** @typedef {Awaited<ReturnType<typeof quietTenant>>} QuietRun */
    /** @type {{ alone: QuietRun[]; beside: QuietRun[]; noisy: { rps: number; p99: number; non2xx: number }[];
     *   live: Awaited<ReturnType<typeof probe>>[] }} */
    const rounds = { alone: [], beside: [], noisy: [], live: [] };
    for (let round = 0; round < ROUNDS; round += 1) {
      // What A's round left (its queued calls, the relay's backlog, the store's vacuum) is done before B runs alone.
      await quiet(stack);
      rounds.alone.push(await quietTenant(api, quietKey));
      const noisyRun = run(
        process.execPath,
        [
          path.join(__dirname, 'noisy-tenant.js'),
          JSON.stringify({
            url: `${api}/moderate`,
            connections: NOISY_CONNECTIONS,
            durationS: DURATION_S + 2,
            rate: NOISY_RATE,
          }),
        ],
        { env: { ...process.env, BENCH_NOISY_KEY: noisyKey } },
      ).then((out) => JSON.parse(out.trim().split('\n').at(-1) ?? '{}'));
      const besideRun = quietTenant(api, quietKey);
      const livez = probe(`http://127.0.0.1:${stack.adminPorts.moderator}/livez`, Promise.all([besideRun, noisyRun]));
      const [beside, noisy] = await Promise.all([besideRun, noisyRun]);
      rounds.beside.push(beside);
      rounds.noisy.push(noisy);
      rounds.live.push(await livez);
    }
    const pooled = (results, kind) => {
      const latencies = results.flatMap((result) => result[kind].latencies).sort((a, b) => a - b);
      return {
        p99: Math.round(percentile(latencies, 99)),
        rounds: results.map((result) => result[kind].p99).join(', '),
        non2xx: results.reduce((sum, result) => sum + (result[kind].non2xx ?? 0), 0),
        errors: results.reduce((sum, result) => sum + (result[kind].errors ?? result[kind].failed ?? 0), 0),
      };
    };
    const alone = { moderate: pooled(rounds.alone, 'moderate'), read: pooled(rounds.alone, 'read') };
    const beside = { moderate: pooled(rounds.beside, 'moderate'), read: pooled(rounds.beside, 'read') };
    const noisy = {
      rps: rounds.noisy.reduce((sum, result) => sum + result.rps, 0) / ROUNDS,
      p99: Math.max(...rounds.noisy.map((result) => result.p99)),
      non2xx: rounds.noisy.reduce((sum, result) => sum + result.non2xx, 0),
    };
    const live = {
      answered: rounds.live.reduce((sum, result) => sum + result.answered, 0),
      failed: rounds.live.reduce((sum, result) => sum + result.failed, 0),
      slowest: Math.max(...rounds.live.map((result) => result.slowest)),
    };

    const ratio = (a, b) => (a / Math.max(1, b)).toFixed(2);
    process.stdout.write(
      `\nnoisy neighbour (${ROUNDS} rounds of ${DURATION_S} s alone and beside A in turn): tenant A, ` +
        `${HEAVY_RULES ? 'heaviest admitted' : 'default'} rule set, 100,000-character records, ` +
        `${NOISY_CONNECTIONS} connections: ${Math.round(noisy.rps)} req/s, p99 ${noisy.p99} ms, ` +
        `non-2xx ${noisy.non2xx}\n` +
        `  tenant B /moderate at ${RATE} req/s: p99 ${alone.moderate.p99} ms alone, ${beside.moderate.p99} ms beside A ` +
        `(ratio ${ratio(beside.moderate.p99, alone.moderate.p99)}, goal ≤ 2; per round ${alone.moderate.rounds} ` +
        `alone, ${beside.moderate.rounds} beside); non-2xx ${alone.moderate.non2xx + beside.moderate.non2xx}, ` +
        `errors ${alone.moderate.errors + beside.moderate.errors}\n` +
        `  tenant B GET /records?limit=1: p99 ${alone.read.p99} ms alone, ${beside.read.p99} ms beside A ` +
        `(ratio ${ratio(beside.read.p99, alone.read.p99)}, goal ≤ 2; per round ${alone.read.rounds} alone, ` +
        `${beside.read.rounds} beside); failed ${alone.read.errors + beside.read.errors}\n` +
        `  moderator /livez every 200 ms meanwhile: ${live.answered} answered, ${live.failed} not within 1 s, ` +
        `slowest ${live.slowest} ms\n`,
    );
  } finally {
    await stack.stop();
  }
}

module.exports = { main };
