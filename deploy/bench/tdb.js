'use strict';
// `npm run bench -- tdb`: the cost of Transparency Database submission (Art. 24(5) DSA) and of the transparency report,
// in one run of the whole stack, every record flagged (so every record has a statement of reasons):
// 1. the persisted /moderate maximum (closed loop), the peer of the runs below;
// 2. ingest → webhook at BENCH_TDB_LOAD (default 0.8) × that maximum for BENCH_TDB_DURATION_S (default 30) each, after
//    BENCH_TDB_WARM_S (default 15) of warm-up: a first run with submission off that settles the stack (shown, left out),
//    then BENCH_TDB_ROUNDS (3) times on (to the local TDB stand-in of the tests, which validates every statement) and
//    off; the pipeline's p99 of each run and of each 5 s in it, the ratio of the median on to the median off (goal
//    ≤ 1.2×), CPU and store commands per record, and the statements the stand-in stored per second, with how long
//    after a run's last ingest its last statement arrived;
// 3. one transparency report over a year holding BENCH_TDB_REPORT_DECISIONS (default 10,000) decisions, counted by
//    the moderator's own counter code over 366 days and two writers: its time and the gateway's store commands.
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');
const { randomBytes } = require('node:crypto');
const { fork } = require('node:child_process');
const { MongoClient } = require('mongodb');
const { ROOT, waitUntil } = require('../local/util');
const { startStack } = require('./stack');
const { load, summary } = require('./moderate');
const { ingestBody, ingestAt, waitForWebhooks, figures, startReceiver } = require('./webhook-runs');
const { percentile } = require('./percentile');
const { costSnapshot, costPer, formatCost, quiet } = require('./cost');

const LOAD = Number(process.env.BENCH_TDB_LOAD || 0.8);
const DURATION_S = Number(process.env.BENCH_TDB_DURATION_S || 30);
const WARM_S = Number(process.env.BENCH_TDB_WARM_S || 15);
const REPORT_DECISIONS = Number(process.env.BENCH_TDB_REPORT_DECISIONS || 10000);
const REPORT_CALLS = 5;
/** Runs of each kind, submission on then off. */
const ROUNDS = Number(process.env.BENCH_TDB_ROUNDS || 3);

/**
 * The local TDB stand-in of the tests (deploy/test-support/tdb.ts), compiled here with swc and run in a child process
 * (deploy/bench/tdb-child.js): its work must not delay this process's load and webhook receiver.
 */
async function startTdbStandIn() {
  const file = path.join(ROOT, 'deploy', 'test-support', 'tdb.ts');
  const { code } = require('@swc/core').transformSync(fs.readFileSync(file, 'utf8'), {
    filename: file,
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
  });
  // Only Node's own modules are imported there, so the compiled file runs from anywhere.
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-tdb-')), 'tdb.js');
  fs.writeFileSync(out, code);
  const child = fork(path.join(__dirname, 'tdb-child.js'), [out], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  /** @type {Map<number, (result: any) => void>} */
  const waiting = new Map();
  let next = 0;
  const url = await new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the TDB stand-in exited with ${code}`)));
    child.on('message', (/** @type {any} */ message) => {
      if (message.ready) resolve(message.ready);
      else waiting.get(message.id)?.(message.result);
      waiting.delete(message.id);
    });
  });
  /** @returns {Promise<any>} */
  const ask = (cmd, arg) =>
    new Promise((resolve) => {
      next += 1;
      waiting.set(next, resolve);
      child.send({ id: next, cmd, arg });
    });
  return {
    url,
    /** @returns {Promise<string>} */
    tokenFor: (platform) => ask('token', platform),
    /** @returns {Promise<number>} */
    storedCount: () => ask('storedCount'),
    /** When each statement from the `from`-th on was stored (ms since the epoch). @returns {Promise<number[]>} */
    storedTimes: (from) => ask('storedTimes', from),
    /** @returns {Promise<{ batchCalls: number; refused: number }>} */
    summary: () => ask('summary'),
    close: () => ask('close'),
  };
}

/** @returns {Promise<any>} */
async function api(base, key, method, route, payload) {
  const res = await fetch(`${base}${route}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: payload === undefined ? undefined : JSON.stringify(payload),
  });
  if (res.status >= 300) throw new Error(`${method} ${route} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

/**
 * Counts of `decisions` decisions over the 366 days before today, written by the moderator's TransparencyCounter (two
 * instances: two writers), as the moderator writes them when it commits: automated flags, people confirming and
 * overturning them, reports and appeals.
 */
async function seedReportCounts(mongoUrl, tenantId, decisions) {
  const { TransparencyCounter } = require(path.join(ROOT, 'moderator', 'dist', 'transparency', 'transparency-counter'));
  const pino = require('pino');
  const client = new MongoClient(mongoUrl);
  try {
    const db = client.db('vigil_bench', { ignoreUndefined: true });
    const writers = [0, 1].map(() => new TransparencyCounter(db, pino({ level: 'silent' })));
    const now = Date.now();
    const events = [];
    for (let i = 0; i < decisions; i += 1) {
      // Spread evenly over the days, in day order as commits come.
      const occurredAt = new Date(now - Math.floor((i * 366) / decisions) * 86_400_000).toISOString();
      const kind = i % 10;
      const base = { id: `e${i}`, tenantId, version: 2, occurredAt, correlationId: 'c' };
      if (kind < 6) {
        events.push({
          ...base,
          stream: `record-rec_${i}`,
          type: 'RecordModerated',
          data: {
            recordId: `rec_${i}`,
            moderationId: `mod_${i}`,
            status: kind === 5 ? 'Compliant' : 'Flagged',
            previousStatus: kind === 5 ? 'Flagged' : 'Compliant',
            via: kind >= 4 ? 'Manual' : 'AI',
            reasons: [],
            rules: ['spam'],
            testMode: false,
            ...(kind >= 4
              ? {
                  confirmsAutomated: kind === 4,
                  review: { rules: ['spam'], ruleSetVersion: 1, outcome: kind === 4 ? 'confirmed' : 'overturned' },
                }
              : {}),
          },
        });
      } else if (kind < 8) {
        events.push({
          ...base,
          stream: `report-rpt_${i}`,
          type: 'ReportDecided',
          data: {
            reportId: `rpt_01J${String(i).padStart(23, '0')}`,
            target: { type: 'record', id: `rec_${i}`, clientId: `c${i}` },
            reporter: { type: kind === 6 ? 'user' : 'trusted_flagger', id: 'r' },
            category: 'STATEMENT_CATEGORY_SCAMS_AND_FRAUD',
            outcome: 'NoAction',
            reason: 'fine',
          },
        });
      } else {
        events.push({
          ...base,
          stream: `user-usr_${i}`,
          type: 'AppealDecided',
          data: {
            appealId: `apl_${i}`,
            userId: `usr_${i}`,
            status: kind === 8 ? 'Approved' : 'Rejected',
            via: 'Manual',
          },
        });
      }
    }
    // In commits of 100, alternating writers, as two moderators would.
    for (let from = 0; from < events.length; from += 100) {
      await writers[(from / 100) % 2].count(events.slice(from, from + 100));
    }
    return await db.collection('transparency_counts').countDocuments({ tenantId });
  } finally {
    await client.close();
  }
}

const ratio = (value, peer) => `${(value / peer).toFixed(2)}×`;

async function main() {
  const tdb = await startTdbStandIn();
  const receiver = await startReceiver();
  const secretsKey = randomBytes(32).toString('base64');
  const stack = await startStack({
    services: ['moderator', 'notifier', 'gateway'],
    env: { WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32', SECRETS_ENCRYPTION_KEY: secretsKey },
  });
  const say = (line) => process.stdout.write(`${line}\n`);
  try {
    const base = `http://127.0.0.1:${stack.ports.gateway}/api/v1`;
    const key = stack.apiKey;
    await api(base, key, 'POST', '/webhook-endpoints', { url: receiver.url });
    // Every benchmark record is flagged: each has a statement of reasons to submit.
    await api(base, key, 'PUT', '/rules', {
      rules: [{ id: 'river', name: 'River', strategies: [{ type: 'patterns', patterns: ['river'] }] }],
    });

    const probe = await api(base, key, 'POST', '/moderate', ingestBody('probe'));
    if (probe.status !== 'Flagged') throw new Error(`a benchmark record is ${probe.status}, not Flagged`);

    // 1. The peer: persisted /moderate at its maximum.
    const headers = { authorization: `Bearer ${key}` };
    await load(`${base}/moderate`, { body: (i) => ingestBody(`warm-${i}`), headers });
    await quiet(stack);
    const moderate = summary(await load(`${base}/moderate`, { body: (i) => ingestBody(`mod-${i}`), headers }));
    const rate = Math.round(moderate.rps * LOAD);
    say(
      `\nTransparency Database benchmark (peer: persisted /moderate maximum ${moderate.rps} req/s, every record flagged)`,
    );

    // 2. The pipeline at LOAD × that maximum: off, on, off.
    const warm = await ingestAt(base, key, 'warm', rate, WARM_S);
    await waitForWebhooks(warm, receiver.received, 120000);
    await quiet(stack);
    // Each run's cost per accepted record, from the start of its ingest until its webhooks (and, with submission on,
    // its statements) are in: CPU by process and store commands by service.
    /** @param {string} prefix @param {(accepted: number) => Promise<unknown>} [drained] */
    const steady = async (prefix, drained = async () => {}) => {
      const before = await costSnapshot(stack);
      const sent = await ingestAt(base, key, prefix, rate, DURATION_S);
      const lastSent = Math.max(...sent.values());
      await waitForWebhooks(sent, receiver.received, 120000);
      await drained(sent.size);
      const cost = costPer(before, await costSnapshot(stack), sent.size);
      // The p99 of each 5 s of sends: one stall of the machine shows as one window, a steady cost in all of them.
      const start = Math.min(...sent.values());
      const byWindow = [];
      for (const [id, at] of sent) {
        const arrived = receiver.received.get(id);
        if (arrived === undefined) continue;
        const index = Math.floor((at - start) / 5000);
        (byWindow[index] ??= []).push(arrived - at);
      }
      const windows = byWindow.map((list) =>
        Math.round(
          percentile(
            list.sort((a, b) => a - b),
            99,
          ),
        ),
      );
      return { figures: figures(sent, receiver.received), lastSent, cost, windows };
    };
    const line = (label, run) =>
      `${label}: ${run.figures.delivered} of ${run.figures.accepted} webhooked at ${rate}/s (${LOAD}×), p50 ${run.figures.p50} ms, p99 ${run.figures.p99} ms ` +
      `(p99 of each 5 s: ${run.windows.join(', ')})`;
    // A first run settles the stack after the warm-up's drain; it is shown, and left out of the comparison.
    const settle = await steady('settle');
    say(line('first run, submission off (left out)', settle));
    const settings = {
      token: await tdb.tokenFor('bench'),
      baseUrl: tdb.url,
      territorialScope: ['DE', 'FR'],
    };
    // Then on, off, three times over: a stall of the machine in one run moves a mean, not the median.
    const offs = [];
    const ons = [];
    let stored = 0;
    let expected = 0;
    let lastAfterIngest = 0;
    let span = 0;
    for (let round = 1; round <= ROUNDS; round += 1) {
      await api(base, key, 'PUT', '/settings/transparency-database', settings);
      const storedBefore = await tdb.storedCount();
      // Every statement of the run stored (bounded: a slow drain is a figure, not a failure).
      const on = await steady(`on${round}`, (accepted) =>
        waitUntil(async () => (await tdb.storedCount()) - storedBefore >= accepted, {
          timeoutMs: 60000,
          intervalMs: 100,
          what: 'every statement stored',
        }).catch(() => undefined),
      );
      const times = await tdb.storedTimes(storedBefore);
      stored += times.length;
      expected += on.figures.accepted;
      span += (Math.max(...times) - Math.min(...times)) / 1000;
      lastAfterIngest = Math.max(lastAfterIngest, (Math.max(...times) - on.lastSent) / 1000);
      say(line(`submission on (${round})`, on));
      ons.push(on);
      await api(base, key, 'DELETE', '/settings/transparency-database');
      const off = await steady(`off${round}`);
      say(line(`submission off (${round})`, off));
      offs.push(off);
    }
    const calls = await tdb.summary();
    say(
      `  statements stored by the local TDB: ${stored} of ${expected} at ${(stored / Math.max(span, 0.001)).toFixed(0)}/s ` +
        `(the ingest rate was ${rate}/s), the last at most ${lastAfterIngest.toFixed(1)} s after its run's last ingest; ` +
        `${calls.batchCalls} batch calls, refused ${calls.refused}`,
    );
    const [lastOff, lastOn] = [offs.at(-1), ons.at(-1)];
    if (!lastOff || !lastOn) throw new Error('a run is missing');
    say(`  per record, submission off (last run): ${formatCost(lastOff.cost)}`);
    say(`  per record, submission on (last run):  ${formatCost(lastOn.cost)}`);
    const median = (runs) =>
      percentile(
        runs.map((run) => run.figures.p99).sort((a, b) => a - b),
        50,
      );
    say(
      `pipeline p99 with submission on ${median(ons).toFixed(0)} ms, off ${median(offs).toFixed(0)} ms (medians of ${ROUNDS} runs each): ` +
        `${ratio(median(ons), Math.max(1, median(offs)))} (goal ≤ 1.2×)`,
    );

    // 3. One transparency report over a year of counters.
    const reportTenant = await tenantOfKey(stack);
    const docs = await seedReportCounts(stack.servers.mongoUrl, reportTenant, REPORT_DECISIONS);
    const to = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const from = new Date(Date.now() - 365 * 86_400_000).toISOString().slice(0, 10);
    const times2 = [];
    const before = await costSnapshot(stack);
    for (let i = 0; i < REPORT_CALLS; i += 1) {
      const started = process.hrtime.bigint();
      const report = await api(base, key, 'GET', `/transparency-report?from=${from}&to=${to}`);
      times2.push(Number(process.hrtime.bigint() - started) / 1e6);
      if (i === 0 && report.ownInitiative.total < REPORT_DECISIONS * 0.5) {
        throw new Error(`the report counts ${report.ownInitiative.total} own-initiative decisions`);
      }
    }
    const after = await costSnapshot(stack);
    const commands = ((after.commands.gateway ?? 0) - (before.commands.gateway ?? 0)) / REPORT_CALLS;
    times2.sort((a, b) => a - b);
    say(
      `transparency report over 366 days holding ${REPORT_DECISIONS} decisions (${docs} counter documents, two writers): ` +
        `median ${(times2[Math.floor(REPORT_CALLS / 2)] ?? 0).toFixed(0)} ms of ${REPORT_CALLS} calls, ` +
        `${commands.toFixed(1)} gateway store commands per report (13 month reads plus the API key's)`,
    );
  } finally {
    await stack.stop();
    await receiver.close();
    await tdb.close();
  }
}

/** The bench tenant's id, read from its API key document (the API does not show tenant ids). */
async function tenantOfKey(stack) {
  const client = new MongoClient(stack.servers.mongoUrl);
  try {
    // The benchmark's only tenant.
    const doc = await client.db('vigil_bench').collection('api_keys').findOne({});
    if (!doc) throw new Error('no API key stored');
    return doc.tenantId;
  } finally {
    await client.close();
  }
}

module.exports = { main };
