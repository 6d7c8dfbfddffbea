'use strict';
// `npm run bench -- e2e`: ingest → webhook received, through all three services, measured against the persisted
// /moderate maximum of the same run (the peer: the pipeline moderates and persists each record the same way, then
// delivers it):
// 1. the persisted /moderate maximum (closed loop), with its CPU per process and store commands per service;
// 2. after BENCH_E2E_WARM_S (default 120) of ingests that warm the path (not measured), a steady open-loop ingest run at
//    BENCH_E2E_LOAD (default 0.8) × that maximum for BENCH_E2E_DURATION_S (default 60): webhook latency p50/p99,
//    nothing lost, and per delivered record CPU ms by process and store commands by service;
// 3. overload: BENCH_E2E_OVERLOAD (default 1.5) × the maximum for BENCH_E2E_OVERLOAD_S (default 60), delivery rate until
//    the backlog is gone (overall and its slowest 10 s), then a burst of BENCH_E2E_BURST (default 3,000) ingests
//    (BENCH_E2E_STEADY_ONLY=1 stops before this step);
// 4. a noisy neighbour: a second tenant ingesting 5/s; the steady run beside it in rounds A B B A, A while its two
//    endpoints answer (the reference), B once one refuses connections with BENCH_E2E_DEAD (default 50,000) retries
//    pending and the other never answers (the retries deleted before the last A); the p99 of both rounds of each
//    kind; the idle stack's CPU before and after the retries are written, and the burst again beside them.
const net = require('node:net');
const { MongoClient } = require('mongodb');
const { startStack } = require('./stack');
const { load, summary } = require('./moderate');
const { ingestBody, ingestAt, waitForWebhooks, figures, startReceiver } = require('./webhook-runs');
const { costSnapshot, costPer, commandDetail, formatCost, idleCost, quiet } = require('./cost');

const DURATION_S = Number(process.env.BENCH_E2E_DURATION_S || 60);
const LOAD = Number(process.env.BENCH_E2E_LOAD || 0.8);
/** The lower rates, as fractions of the maximum, at which the cost per record is printed too (BENCH_E2E_LOW_LOADS). */
const LOW_LOADS = (process.env.BENCH_E2E_LOW_LOADS ?? '0.1,0.4').split(',').filter(Boolean).map(Number);
const OVERLOAD = Number(process.env.BENCH_E2E_OVERLOAD || 1.5);
const OVERLOAD_S = Number(process.env.BENCH_E2E_OVERLOAD_S || 60);
const BURST = Number(process.env.BENCH_E2E_BURST || 3000);
const DEAD = Number(process.env.BENCH_E2E_DEAD || 50000);
/** Seconds of ingests at the steady rate before anything is measured (BENCH_E2E_WARM_S). */
const WARM_S = Number(process.env.BENCH_E2E_WARM_S || 120);
/** The noisy neighbour's own ingests per second, in the reference run and beside its dead receivers. */
const NEIGHBOUR_RATE = 5;
const IDLE_S = 20;
/** Idle windows measured after the retries are written. */
const SEEDED_WINDOWS = 6;
/** The notifier's default time bucket, in which seeded retries are written (DUE_BUCKET_MS). */
const BUCKET_MS = 10000;

/** A receiver that accepts connections and never answers (the notifier's timeout ends each attempt). */
async function startHangingReceiver() {
  const sockets = new Set();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  return {
    url: `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}/hook`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A loopback URL that refuses connections (a port bound and released). */
async function refusingUrl() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}/hook`;
}

async function updateEndpoint(base, apiKey, id, url) {
  const res = await fetch(`${base}/webhook-endpoints/${id}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url }),
  });
  if (res.status >= 300) throw new Error(`changing a webhook endpoint answered ${res.status}`);
}

async function createEndpoint(base, apiKey, url) {
  const res = await fetch(`${base}/webhook-endpoints`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url }),
  });
  if (res.status >= 300) throw new Error(`creating a webhook endpoint answered ${res.status}`);
  return /** @type {{ data: { id: string } }} */ (await res.json()).data;
}

/** The burst: every ingest at once (64 at a time), then the rate at which webhooks arrive until the last. */
async function burst(base, apiKey, prefix, received) {
  const ids = Array.from({ length: BURST }, (_, i) => `${prefix}-${i}`);
  const started = Date.now();
  const sentAt = new Map();
  for (let from = 0; from < ids.length; from += 64) {
    await Promise.all(
      ids.slice(from, from + 64).map((clientId) =>
        fetch(`${base}/ingest`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify(ingestBody(clientId)),
        })
          .then((res) => res.status === 202 && sentAt.set(clientId, started))
          .catch(() => undefined),
      ),
    );
  }
  await waitForWebhooks(sentAt, received, 300000);
  const done = [...sentAt.keys()].filter((id) => received.has(id));
  const end = Math.max(...done.map((id) => received.get(id)));
  return { accepted: sentAt.size, delivered: done.length, rate: done.length / Math.max(0.001, (end - started) / 1000) };
}

/**
 * Writes `count` pending deliveries for the tenant's endpoint, as the notifier writes them, due from `fromMs` from now
 * over `overMs` (by default over the next hour).
 */
async function seedRetries(stack, tenantId, endpointId, count, { fromMs = 60000, overMs = 3_540_000 } = {}) {
  const client = new MongoClient(stack.servers.mongoUrl);
  try {
    /** @type {import('mongodb').Collection<Record<string, unknown> & { _id: string }>} */
    const deliveries = client.db(stack.common.MONGO_DB, { ignoreUndefined: true }).collection('deliveries');
    const now = Date.now();
    for (let from = 0; from < count; from += 5000) {
      const docs = [];
      for (let i = from; i < Math.min(count, from + 5000); i += 1) {
        const dueAt = new Date(now + fromMs + Math.floor((i * overMs) / count));
        const subjectId = `mod_seed${i}`;
        docs.push({
          _id: `dlv_seed_${i}`,
          tenantId,
          endpointId,
          webhookId: `msg_seed_${i}`,
          eventId: `seed${i}`,
          event: 'record.flagged',
          subjectId,
          trigger: {
            kind: 'record',
            event: 'record.flagged',
            subjectId,
            tenantId,
            recordId: `rec_seed${i}`,
            status: 'Flagged',
            via: 'Automation',
            at: new Date(now),
            version: 2,
          },
          body: JSON.stringify({ event: 'record.flagged', id: subjectId }),
          state: 'pending',
          attemptCount: 1,
          cycleAttempts: 1,
          attempts: [{ at: new Date(now), durationMs: 1, error: 'network_error' }],
          dueAt,
          due: String(Math.floor(dueAt.getTime() / BUCKET_MS)),
          lastError: 'network_error',
          createdAt: new Date(now),
          updatedAt: new Date(now),
        });
      }
      await deliveries.insertMany(docs, { ordered: false });
    }
  } finally {
    await client.close();
  }
}

/** Deletes every delivery waiting for the tenant's endpoints (the seeded retries and its own failed ones). */
async function clearRetries(stack, endpointIds) {
  const client = new MongoClient(stack.servers.mongoUrl);
  try {
    const deliveries = client.db(stack.common.MONGO_DB).collection('deliveries');
    for (const endpointId of endpointIds) await deliveries.deleteMany({ endpointId });
  } finally {
    await client.close();
  }
}

/** The records of several runs as one: their latencies pooled. */
const pooled = (...runs) => new Map(runs.flatMap((run) => [...run]));

const ratio = (value, peer) => `${(value / peer).toFixed(2)}×`;

async function main() {
  const receiver = await startReceiver();
  const hanging = await startHangingReceiver();
  const stack = await startStack({
    services: ['moderator', 'notifier', 'gateway'],
    env: { WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32' },
  });
  const out = [];
  const say = (line) => {
    out.push(line);
    process.stdout.write(`${line}\n`);
  };
  try {
    const base = `http://127.0.0.1:${stack.ports.gateway}/api/v1`;
    const key = stack.apiKey;
    await createEndpoint(base, key, receiver.url);

    // 1. The peer: persisted /moderate at its maximum.
    await load(`${base}/moderate`, {
      body: (i) => ingestBody(`warm-${i}`),
      headers: { authorization: `Bearer ${key}` },
    });
    await quiet(stack);
    const modBefore = await costSnapshot(stack);
    const raw = await load(`${base}/moderate`, {
      body: (i) => ingestBody(`mod-${i}`),
      headers: { authorization: `Bearer ${key}` },
    });
    const moderate = summary(raw);
    await quiet(stack);
    const modCost = costPer(modBefore, await costSnapshot(stack), raw.requests.total);
    const max = moderate.rps;
    say(`\ningest → webhook benchmark (peer: persisted /moderate maximum ${max} req/s, p99 ${moderate.p99} ms)`);
    say(`per persisted /moderate: ${formatCost(modCost)}`);

    // 2. Steady at LOAD × the maximum, after the ingest path is warmed as the peer was: the /moderate runs above barely
    // use Kafka, whose JIT compiler takes about two minutes of ingests before its CPU per request settles (on this
    // machine about a third of Kafka's CPU in the first minute, nearly nothing by the third).
    const steadyRate = Math.round(max * LOAD);
    const warmSent = await ingestAt(base, key, 'warm-ingest', steadyRate, WARM_S);
    await waitForWebhooks(warmSent, receiver.received, 120000);
    say(`warm-up (not measured): ${warmSent.size} ingests at ${steadyRate}/s`);
    await quiet(stack);
    const before = await costSnapshot(stack);
    const steadySent = await ingestAt(base, key, 'steady', steadyRate, DURATION_S);
    await waitForWebhooks(steadySent, receiver.received, 120000);
    const steady = figures(steadySent, receiver.received);
    const steadyAfter = await costSnapshot(stack);
    const steadyCost = costPer(before, steadyAfter, steady.delivered);
    say(
      `steady ${steadyRate}/s (${LOAD}× the maximum) for ${DURATION_S} s: ${steady.delivered} of ${steady.accepted} webhooked, ` +
        `p50 ${steady.p50} ms, p99 ${steady.p99} ms (goal ≤ 1000 ms)`,
    );
    say(`per delivered record: ${formatCost(steadyCost)}`);
    say(`  store commands by service, command and collection: ${commandDetail(before, steadyAfter, steady.delivered)}`);
    say(
      `  ratio to a persisted /moderate: CPU ${ratio(steadyCost.cpuTotal, modCost.cpuTotal)}, ` +
        `store commands ${ratio(steadyCost.commandsTotal, modCost.commandsTotal)}`,
    );
    await quiet(stack);
    // The same at lower rates: what a record costs when the group commits have no crowd to share.
    for (const low of LOW_LOADS) {
      const rate = Math.max(1, Math.round(max * low));
      const lowBefore = await costSnapshot(stack);
      const sent = await ingestAt(base, key, `steady-${low}`, rate, DURATION_S);
      await waitForWebhooks(sent, receiver.received, 120000);
      const run = figures(sent, receiver.received);
      const lowAfter = await costSnapshot(stack);
      const cost = costPer(lowBefore, lowAfter, run.delivered);
      say(
        `steady ${rate}/s (${low}× the maximum): ${run.delivered} of ${run.accepted} webhooked, p50 ${run.p50} ms, ` +
          `p99 ${run.p99} ms; per delivered record: ${formatCost(cost)}`,
      );
      say(`  store commands by service, command and collection: ${commandDetail(lowBefore, lowAfter, run.delivered)}`);
      await quiet(stack);
    }
    const idle = await idleCost(stack, IDLE_S);
    say(`idle stack over ${IDLE_S} s: ${idle.text}`);
    // BENCH_E2E_STEADY_ONLY=1 stops here: the peer and the steady run, for comparing the cost per record of two builds.
    if (process.env.BENCH_E2E_STEADY_ONLY === '1') return;

    // 3. Overload, then the burst.
    const overRate = Math.round(max * OVERLOAD);
    const overSent = await ingestAt(base, key, 'over', overRate, OVERLOAD_S);
    await waitForWebhooks(overSent, receiver.received, 300000);
    const over = figures(overSent, receiver.received);
    say(
      `overload ${overRate}/s (${OVERLOAD}×) for ${OVERLOAD_S} s: ${over.delivered} of ${over.accepted} webhooked at ` +
        `${over.rate.toFixed(0)}/s until the backlog was gone (${ratio(over.rate, max)} the maximum; slowest 10 s ` +
        `${over.slowestWindow.toFixed(0)}/s, ${ratio(over.slowestWindow, max)}; goal ≥ 0.9×)`,
    );
    say(
      `  deliveries per second in each 10 s from the first send: ${over.windows.map((w) => w.toFixed(0)).join(', ')}`,
    );
    await quiet(stack);
    const burst1 = await burst(base, key, 'burst', receiver.received);
    say(
      `burst of ${BURST}: ${burst1.delivered} of ${burst1.accepted} webhooked at ${burst1.rate.toFixed(0)}/s ` +
        `(${ratio(burst1.rate, max)} the maximum; goal ≥ 0.9×)`,
    );
    await quiet(stack);
    // Two windows: the first after the burst may hold the store's deferred maintenance (PostgreSQL's autovacuum of
    // what the runs wrote), which ends; the second is the stack at rest.
    const idleFirst = await idleCost(stack, IDLE_S);
    const idleBefore = await idleCost(stack, IDLE_S);

    // 4. The noisy neighbour, in rounds A B B A: A, the steady run beside another tenant ingesting NEIGHBOUR_RATE/s
    // for two endpoints that answer (the reference); B, the same once one of them refuses connections with DEAD
    // retries pending for it and the other never answers. Between the B rounds and the last A the retries are
    // deleted and the endpoints answer again. So the ratio shows what the dead receivers and the retries cost, not the
    // neighbour's ingests (which every round carries), and the order balances the store's drift over the runs; the
    // p99 is taken over both rounds of a kind, as one 60 s run's p99 moves by 2-3× between identical runs.
    const noisyKey = await stack.createTenant(`noisy${Date.now()}`);
    const dead = await createEndpoint(base, noisyKey, receiver.url);
    const stalled = await createEndpoint(base, noisyKey, receiver.url);
    const noisyTenant = await tenantIdOf(stack, dead.id);
    /** One steady run of the first tenant beside the neighbour's own ingests. */
    const besideNeighbour = async (prefix) => {
      const neighbourLoad = ingestAt(base, noisyKey, `${prefix}-neighbour`, NEIGHBOUR_RATE, DURATION_S + 10);
      const sent = await ingestAt(base, key, prefix, steadyRate, DURATION_S);
      await waitForWebhooks(sent, receiver.received, 120000);
      await neighbourLoad;
      return sent;
    };
    const describe = (run) => `${run.delivered} of ${run.accepted} webhooked, p50 ${run.p50} ms, p99 ${run.p99} ms`;
    const refSent = await besideNeighbour('steady-ref');
    const ref = figures(refSent, receiver.received);
    say(
      `A: steady ${steadyRate}/s beside a neighbour ingesting ${NEIGHBOUR_RATE}/s to receivers that answer: ` +
        describe(ref),
    );
    await updateEndpoint(base, noisyKey, dead.id, await refusingUrl());
    await updateEndpoint(base, noisyKey, stalled.id, hanging.url);
    await seedRetries(stack, noisyTenant, dead.id, DEAD);
    await quiet(stack);
    // Windows of IDLE_S until two minutes after they were written: PostgreSQL's autovacuum and autoanalyze of the
    // retries just written start within its one-minute nap and take a window or two; the last window is the stack at
    // rest holding them.
    const idleSeeded = [];
    for (let window = 0; window < SEEDED_WINDOWS; window += 1) idleSeeded.push(await idleCost(stack, IDLE_S));
    const idleHolding = /** @type {{ cores: number; parts: string; shares: Record<string, number> }} */ (
      idleSeeded.at(-1)
    );
    say(
      `idle stack: ${(idleFirst.cores * 100).toFixed(1)}% of one core in the first ${IDLE_S} s after the burst ` +
        `(${idleFirst.parts}), ${(idleBefore.cores * 100).toFixed(1)}% in the next ${IDLE_S} s (${idleBefore.parts}); with ${DEAD} retries ` +
        `pending to a dead endpoint, in ${SEEDED_WINDOWS} windows of ${IDLE_S} s after they were written: ` +
        `${idleSeeded.map((w) => `${(w.cores * 100).toFixed(1)}% (postgres ${(100 * (w.shares.postgres ?? 0)).toFixed(1)}%)`).join(', ')}; ` +
        `holding them at rest (the last) ${(idleHolding.cores * 100).toFixed(1)}% (${idleHolding.parts}) ` +
        `(goal < 5%)`,
    );
    // Fresh failures to both of its endpoints while the other tenant's figures are taken.
    const noisySent = await besideNeighbour('steady2');
    const noisy = figures(noisySent, receiver.received);
    say(`B: steady ${steadyRate}/s beside the same neighbour, its receivers now dead and hanging: ${describe(noisy)}`);
    const noisySent2 = await besideNeighbour('steady3');
    say(`B: again: ${describe(figures(noisySent2, receiver.received))}`);
    await quiet(stack);
    const burst2 = await burst(base, key, 'burst2', receiver.received);
    say(
      `burst of ${BURST} beside the noisy tenant: ${burst2.delivered} of ${burst2.accepted} webhooked at ` +
        `${burst2.rate.toFixed(0)}/s (${ratio(burst2.rate, burst1.rate)} the clean burst; goal ≥ 0.9×)`,
    );
    await clearRetries(stack, [dead.id, stalled.id]);
    await updateEndpoint(base, noisyKey, dead.id, receiver.url);
    await updateEndpoint(base, noisyKey, stalled.id, receiver.url);
    await quiet(stack);
    const refSent2 = await besideNeighbour('steady-ref2');
    say(
      `A: again, the retries deleted and the neighbour's receivers answering: ${describe(figures(refSent2, receiver.received))}`,
    );
    const refAll = figures(pooled(refSent, refSent2), receiver.received);
    const noisyAll = figures(pooled(noisySent, noisySent2), receiver.received);
    say(
      `beside the neighbour, both rounds of each: with its dead and hanging receivers p99 ${noisyAll.p99} ms, with ` +
        `receivers that answer ${refAll.p99} ms (${ratio(noisyAll.p99, refAll.p99)}, goal ≤ 1.1×; ` +
        `${ratio(noisyAll.p99, steady.p99)} the clean run's)`,
    );
    say(
      `highest sustained pipeline rate: ${Math.max(steady.delivered === steady.accepted && steady.p99 <= 1000 ? steadyRate : 0, burst1.rate).toFixed(0)} records/s (goal 200)`,
    );
  } finally {
    await stack.stop();
    await receiver.close();
    await hanging.close();
  }
}

/** The tenant of an endpoint, read from the store (the API does not show tenant ids). */
async function tenantIdOf(stack, endpointId) {
  const client = new MongoClient(stack.servers.mongoUrl);
  try {
    const doc = await client
      .db(stack.common.MONGO_DB)
      .collection('webhook_endpoints')
      .findOne({ _id: endpointId }, { projection: { tenantId: 1 } });
    if (!doc) throw new Error(`endpoint ${endpointId} not found`);
    return doc.tenantId;
  } finally {
    await client.close();
  }
}

module.exports = { main, seedRetries, createEndpoint, refusingUrl, tenantIdOf };
