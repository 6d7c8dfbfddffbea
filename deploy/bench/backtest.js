'use strict';
// `npm run bench -- backtest`: backtest throughput over BENCH_BACKTEST_RECORDS (100,000) stored records with the
// default rules, next to the persisted /moderate maximum of the same run; then live /moderate p99 at half that maximum,
// without a backtest and while one runs; and what a backtested record costs (store commands and CPU). The records are
// preloaded through the driver, shaped as the moderator stores them (1 KB of text, one in ten Flagged, 500 users).
const { waitUntil } = require('../local/util');
const { withStackDb } = require('./stack');
const { measure, outboxDrained, storedRecord, text1k } = require('./moderate');
const { paced } = require('./paced');
const { costSnapshot, costPer, formatCost, quiet } = require('./cost');

const RECORDS = Number(process.env.BENCH_BACKTEST_RECORDS || 100000);
const DURATION_S = Number(process.env.BENCH_DURATION_S || 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || 32);
const BATCH = 1000;

/** @param {import('mongodb').Db} db @param {string} tenantId */
async function preload(db, tenantId) {
  const records = db.collection('records');
  for (let start = 0; start < RECORDS; start += BATCH) {
    /** @type {any[]} */
    const docs = [];
    for (let i = start; i < Math.min(RECORDS, start + BATCH); i += 1) {
      docs.push(
        storedRecord({
          _id: `rec_backtest_${tenantId}_${i}`,
          tenantId,
          clientId: `backtest-${i}`,
          userId: `usr_backtest_${tenantId}_${i % 500}`,
          sort: `01BACKTEST${String(i).padStart(16, '0')}`,
          i,
        }),
      );
    }
    await records.insertMany(docs, { ordered: false });
  }
}

/**
 * @param {string} base
 * @param {string} key
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<any>}
 */
async function api(base, key, method, path, body) {
  const res = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  /** @type {any} */
  const json = await res.json();
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

async function main() {
  await withStackDb(['moderator', 'gateway'], async (stack, db) => {
    const base = `http://127.0.0.1:${stack.ports.gateway}`;
    const name = `backtest${Date.now()}`;
    const key = await stack.createTenant(name);
    const tenant = await db.collection('tenants').findOne({ name });
    if (!tenant) throw new Error('the backtest tenant was not created');
    const started = Date.now();
    await preload(db, String(tenant._id));
    process.stdout.write(`preloaded ${RECORDS} records in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);

    // The live peer: persisted /moderate of another tenant (the stack's), its maximum and half that rate.
    const auth = { authorization: `Bearer ${stack.apiKey}` };
    const live = (i) => ({
      clientId: `bench-live-${i % 5000}`,
      name: `Post ${i}`,
      entity: 'post',
      content: text1k(i),
      user: { clientId: `user-${i % 500}`, username: `u${i % 500}` },
    });
    const moderateUrl = `${base}/api/v1/moderate`;
    const settle = () => outboxDrained(db);
    const peer = await measure('moderate (persisted)', moderateUrl, { body: live, headers: auth, settle });
    await settle();
    await quiet(stack);

    // Backtest throughput, alone: the default rule set (version 0) over every preloaded record.
    const before = await costSnapshot(stack);
    const job = await api(base, key, 'POST', '/backtests', { version: 0, limit: RECORDS });
    /** @type {any} */
    let done;
    await waitUntil(
      async () => {
        done = await api(base, key, 'GET', `/backtests/${job.id}`);
        return ['succeeded', 'failed', 'cancelled'].includes(done.status);
      },
      { timeoutMs: 3_600_000, intervalMs: 1000, what: 'the backtest to end' },
    );
    const after = await costSnapshot(stack);
    if (done.status !== 'succeeded') throw new Error(`the backtest ended ${done.status} (${done.error ?? ''})`);
    const seconds = (Date.parse(done.finishedAt) - Date.parse(done.startedAt)) / 1000;
    const throughput = done.result.judged / seconds;
    const cost = costPer(before, after, done.result.judged);
    await quiet(stack);

    // Live p99 at half the maximum, without a backtest and then while one runs (cancelled afterwards).
    const rate = Math.max(1, Math.floor(peer.max.rps / 2));
    const steady = (durationS) =>
      paced(moderateUrl, { body: live, headers: auth, rate, durationS, connections: CONNECTIONS });
    await steady(5);
    const without = await steady(DURATION_S);
    await settle();
    const running = await api(base, key, 'POST', '/backtests', { version: 0, limit: RECORDS });
    await waitUntil(async () => (await api(base, key, 'GET', `/backtests/${running.id}`)).status === 'running', {
      timeoutMs: 60000,
      what: 'the second backtest to run',
    });
    // Live traffic until the job has read its selection (a batch a second beside live work): the phase measures the
    // judging, the long part of a job.
    await steady(5);
    for (let i = 0; i < 60; i += 1) {
      if ((await api(base, key, 'GET', `/backtests/${running.id}`)).progress?.selected != null) break;
      await steady(5);
    }
    const mark = await api(base, key, 'GET', `/backtests/${running.id}`);
    const beside = await steady(DURATION_S);
    const still = await api(base, key, 'GET', `/backtests/${running.id}`);
    // Progress is written per 100 records, so this is coarse over a short phase.
    const besideRate = ((still.progress?.processed ?? 0) - (mark.progress?.processed ?? 0)) / DURATION_S;
    await api(base, key, 'POST', `/backtests/${running.id}/cancel`);

    process.stdout.write(`\nbacktest benchmark: ${RECORDS} records stored, default rules, ${DURATION_S} s phases\n`);
    // eslint-disable-next-line no-console
    console.table([
      { figure: 'live /moderate maximum (req/s)', value: peer.max.rps },
      { figure: 'backtest throughput (records/s)', value: Math.round(throughput) },
      { figure: 'backtest ÷ live maximum', value: (throughput / peer.max.rps).toFixed(2) },
      {
        figure: 'backtest rate bound (BACKTEST_RATE_PER_S)',
        value: process.env.BACKTEST_RATE_PER_S || '200 (default)',
      },
      { figure: `live p99 at ${rate} req/s, no backtest (ms)`, value: without.p99 },
      { figure: `live p99 at ${rate} req/s, backtest running (ms)`, value: beside.p99 },
      { figure: 'p99 beside ÷ without', value: (beside.p99 / Math.max(1, without.p99)).toFixed(2) },
      { figure: 'live non-2xx (both phases)', value: without.non2xx + beside.non2xx },
      { figure: 'backtest still running at the end of that phase', value: still.status === 'running' },
      { figure: 'backtest records/s beside live traffic', value: Math.round(besideRate) },
      {
        figure: 'background rate bound (BACKTEST_BUSY_RATE_PER_S)',
        value: process.env.BACKTEST_BUSY_RATE_PER_S || '20 (default)',
      },
      { figure: 'store commands per backtested record', value: cost.commandsTotal.toFixed(2) },
    ]);
    process.stdout.write(`cost per backtested record: ${formatCost(cost)}\n`);
    process.stdout.write(
      `goals: throughput ≥ 0.5× the live maximum (${(throughput / peer.max.rps).toFixed(2)}), ` +
        `live p99 within 1.2× while a backtest runs (${(beside.p99 / Math.max(1, without.p99)).toFixed(2)})\n`,
    );
  });
}

module.exports = { main };
