'use strict';
// `npm run bench -- moderate`: /moderate (persisted and passthrough, ~1 KB text) at full load and at half the maximum
// rate, next to two peers from the same run: the store floor (one findOne by _id + one insertOne per request through
// the driver, same concurrency, same store) and a bare Koa → grpc-js echo of the same shape; peak RSS of both services,
// started with the chart's heap limits (stack.js).
const path = require('node:path');
const autocannon = require('autocannon');
const { MongoClient } = require('mongodb');
const { stopProcess, waitUntil } = require('../local/util');
const { startStack, spawnNode, portFrom, peakRssMb, chartHeapEnv } = require('./stack');
const { storeFloor } = require('./floor');
const { paced } = require('./paced');
const { costSnapshot, costPer, commandDetail, formatCost } = require('./cost');

const DURATION_S = Number(process.env.BENCH_DURATION_S || 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || 32);

function text1k(i) {
  const words = ['river', 'market', 'sunny', 'garden', 'tuesday', 'coffee', 'window', 'yellow', 'bicycle', 'music'];
  let out = '';
  while (out.length < 1000) out += words[(out.length + i) % words.length] + ' ';
  return out.slice(0, 1000);
}

/**
 * A record as the moderator stores it, preloaded straight into the store: post `i` with 1 KB of text, one in ten
 * Flagged, at version 2.
 * @param {{ _id: string; tenantId: string; clientId: string; userId: string; sort: string; i: number }} record
 */
function storedRecord({ _id, tenantId, clientId, userId, sort, i }) {
  const at = new Date();
  return {
    _id,
    tenantId,
    clientId,
    name: `Post ${i}`,
    entity: 'post',
    content: { text: text1k(i), imageUrls: [], externalUrls: [] },
    userId,
    status: i % 10 === 0 ? 'Flagged' : 'Compliant',
    reasons: [],
    rules: [],
    manual: false,
    testMode: false,
    deleted: false,
    protected: false,
    passthrough: false,
    recentCommands: [],
    version: 2,
    lastEventId: sort,
    sort,
    createdAt: at,
    updatedAt: at,
  };
}

/**
 * @typedef {{ body: (i: number) => unknown; headers: Record<string, string> }} LoadOptions
 */

/**
 * @param {string} url
 * @param {LoadOptions} options
 */
function load(url, { body, headers }) {
  return new Promise((resolve, reject) => {
    let n = 0;
    const instance = autocannon(
      {
        url,
        method: 'POST',
        connections: CONNECTIONS,
        duration: DURATION_S,
        headers: { 'content-type': 'application/json', ...headers },
        requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify(body(n++)) }) }],
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
    autocannon.track(instance, { renderProgressBar: false, renderResultsTable: false, renderLatencyTable: false });
  });
}

function summary(result) {
  return {
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

/** Seconds at half rate before the half-rate figures are taken. */
const HALF_RATE_WARM_UP_S = 5;

/**
 * Closed-loop maximum (autocannon, CONNECTIONS busy connections), then an open loop at half that rate (paced.js),
 * measured in steady state: after `settle` (the work the maximum run left behind is done) and a few seconds at that
 * rate.
 */
/**
 * With `stack`, the half-rate run's cost per request is taken too: CPU by process and store commands by service
 * (cost.js), and where the commands went.
 * @param {string} name
 * @param {string} url
 * @param {LoadOptions & { settle?: () => Promise<unknown>; stack?: any }} options
 */
async function measure(name, url, { settle, stack, ...options }) {
  await load(url, options).catch(() => undefined); // warm-up (JIT, connections)
  const max = summary(await load(url, options));
  if (settle) await settle();
  const rate = Math.max(1, Math.floor(max.rps / 2));
  await paced(url, { ...options, rate, durationS: HALF_RATE_WARM_UP_S, connections: CONNECTIONS });
  const before = stack ? await costSnapshot(stack) : undefined;
  const half = await paced(url, { ...options, rate, durationS: DURATION_S, connections: CONNECTIONS });
  if (!stack || !before) return { name, max, half };
  const after = await costSnapshot(stack);
  const requests = half.latencies.length;
  return { name, max, half, cost: costPer(before, after, requests), detail: commandDetail(before, after, requests) };
}

/**
 * Waits (at most two minutes) until the outbox of `db` is empty: the events the maximum run appended are published,
 * so the half-rate run does not share the machine with that backlog.
 */
async function outboxDrained(db) {
  await waitUntil(async () => (await db.collection('outbox').countDocuments({})) === 0, {
    timeoutMs: 120000,
    what: 'the outbox to drain',
  }).catch(() => process.stderr.write('outbox not drained after 2 minutes; measuring anyway\n'));
}

async function main() {
  const stack = await startStack({ services: ['moderator', 'gateway'] });
  const echoGrpc = spawnNode([path.join(__dirname, 'echo.js'), 'grpc'], {});
  const grpcPort = await portFrom(echoGrpc, 'grpc server listening', 'echo grpc');
  const echoHttp = spawnNode([path.join(__dirname, 'echo.js'), 'http', String(grpcPort)], {});
  const httpPort = await portFrom(echoHttp, 'http server listening', 'echo http');
  const client = new MongoClient(stack.servers.mongoUrl);
  try {
    await client.connect();
    const db = client.db(stack.common.MONGO_DB);
    const auth = { authorization: `Bearer ${stack.apiKey}` };
    const record = (passthrough) => (i) => ({
      clientId: `bench-${passthrough ? 'p' : 's'}-${i % 5000}`,
      name: `Post ${i}`,
      entity: 'post',
      content: text1k(i),
      user: { clientId: `user-${i % 500}`, username: `u${i % 500}` },
      ...(passthrough ? { passthrough: true } : {}),
    });
    const base = `http://127.0.0.1:${stack.ports.gateway}/api/v1/moderate`;
    const echo = await measure('echo (Koa → grpc-js)', `http://127.0.0.1:${httpPort}/echo`, {
      body: record(false),
      headers: {},
    });
    const floorMax = await storeFloor(stack.servers.mongoUrl, { connections: CONNECTIONS, durationS: DURATION_S });
    const floorRate = Math.max(1, Math.floor(floorMax.rps / 2));
    // Steady state at half rate, as for the services below.
    await storeFloor(stack.servers.mongoUrl, {
      connections: CONNECTIONS,
      durationS: HALF_RATE_WARM_UP_S,
      rate: floorRate,
    });
    const floorHalf = await storeFloor(stack.servers.mongoUrl, {
      connections: CONNECTIONS,
      durationS: DURATION_S,
      rate: floorRate,
    });
    const floor = { name: 'store floor (findOne + insertOne)', max: { ...floorMax, non2xx: 0, errors: 0 } };
    floor.half = { ...floorHalf, non2xx: 0, errors: 0 };
    const settle = () => outboxDrained(db);
    const persisted = await measure('moderate (persisted)', base, {
      body: record(false),
      headers: auth,
      settle,
      stack,
    });
    const passthrough = await measure('moderate (passthrough)', base, {
      body: record(true),
      headers: auth,
      settle,
      stack,
    });
    const rows = [floor, echo, persisted, passthrough].map((r) => ({
      name: r.name,
      'max req/s': r.max.rps,
      'p50 ms': r.max.p50,
      'p99 ms': r.max.p99,
      'ratio to floor': (r.max.rps / floor.max.rps).toFixed(2),
      'half-rate p50 ms': r.half.p50,
      'half-rate p99 ms': r.half.p99,
      'non-2xx': r.max.non2xx + r.half.non2xx,
      errors: r.max.errors + r.half.errors,
    }));
    process.stdout.write(`\n/moderate benchmark: ${CONNECTIONS} connections, ${DURATION_S} s per run, ~1 KB text\n`);
    console.table(rows); // eslint-disable-line no-console
    for (const r of [persisted, passthrough]) {
      if (!r.cost) continue;
      process.stdout.write(`per ${r.name} request at half rate: ${formatCost(r.cost)}\n  by command: ${r.detail}\n`);
    }
    const ratio = (r) => (r.max.rps / floor.max.rps).toFixed(2);
    const heap = (name) => chartHeapEnv(name).NODE_OPTIONS ?? "Node's default heap";
    process.stdout.write(
      `services started as the chart runs them: gateway ${heap('gateway')}, moderator ${heap('moderator')}\n` +
        `peak RSS: gateway ${peakRssMb(stack.pids.gateway)} MB, moderator ${peakRssMb(stack.pids.moderator)} MB (goal ≤ 150 MB each)\n` +
        `goals: persisted ≥ 0.25× store floor (${ratio(persisted)}), passthrough ≥ 0.25× (${ratio(passthrough)}), p99 at half rate ≤ 1.2× the floor's (${persisted.half.p99} / ${passthrough.half.p99} ms against ${(1.2 * floor.half.p99).toFixed(0)} ms)\n`,
    );
    return { persisted, passthrough, floor };
  } finally {
    await client.close();
    await Promise.allSettled([stopProcess(echoHttp), stopProcess(echoGrpc)]);
    await stack.stop();
  }
}

module.exports = { main, load, measure, outboxDrained, storedRecord, summary, text1k };
