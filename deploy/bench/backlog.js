'use strict';
// `npm run bench -- backlog`: what an idle stack costs while it holds a dead endpoint's due backlog. One endpoint that
// refuses connections, BENCH_BACKLOG (default 50,000) retries for it written as the notifier writes them, all due within
// the first minute. The stack's CPU and store commands over the BENCH_BACKLOG_PARKING_S (default 90) seconds in which
// they come due and are parked, then in BENCH_BACKLOG_WINDOWS (default 6) windows of 20 s while it holds them, next to
// the same stack's in the windows before they were written (the peer; goal while holding: under 5 % of a core, as the
// e2e benchmark's idle stack). BENCH_BACKLOG_PARK_S sets the notifier's DELIVERY_BACKLOG_PARK_MS (default an hour), to
// watch a parked backlog come due again within a run. Last, the endpoint answers again (a receiver on its port): how
// long until every parked delivery arrived, and what delivering them cost (BENCH_BACKLOG_RECOVER=0 skips it).
const http = require('node:http');
const { MongoClient } = require('mongodb');
const { startStack } = require('./stack');
const { idleCost, costSnapshot, costPer, formatCost } = require('./cost');
const { seedRetries, createEndpoint, refusingUrl, tenantIdOf } = require('./e2e');

const BACKLOG = Number(process.env.BENCH_BACKLOG || 50000);
const WINDOWS = Number(process.env.BENCH_BACKLOG_WINDOWS || 6);
const PARKING_S = Number(process.env.BENCH_BACKLOG_PARKING_S || 90);
const PARK_S = process.env.BENCH_BACKLOG_PARK_S ? Number(process.env.BENCH_BACKLOG_PARK_S) : undefined;
const RECOVER = process.env.BENCH_BACKLOG_RECOVER !== '0';
const RECOVER_MAX_S = 1800;
const WINDOW_S = 20;

/** The dead endpoint's deliveries by where they wait: parked, pending and not parked, other states. */
async function whereTheyWait(stack, endpointId) {
  const client = new MongoClient(stack.servers.mongoUrl);
  try {
    const docs = await client
      .db(stack.common.MONGO_DB)
      .collection('deliveries')
      .find({ endpointId }, { projection: { state: 1, parked: 1 } })
      .toArray();
    const parked = docs.filter((doc) => doc.state === 'pending' && doc.parked).length;
    const pending = docs.filter((doc) => doc.state === 'pending').length - parked;
    return { parked, pending, other: docs.length - parked - pending };
  } finally {
    await client.close();
  }
}

/**
 * Listens on the dead endpoint's port, answering 204, until `count` distinct webhooks arrived (or RECOVER_MAX_S): when
 * the first and the last came, and the stack's cost meanwhile.
 */
async function recover(stack, url, count) {
  const ids = new Set();
  let first;
  let last;
  /** @type {() => void} */
  let allArrived = () => undefined;
  const arrived = new Promise((resolve) => (allArrived = () => resolve(undefined)));
  if (count <= 0) allArrived();
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      ids.add(String(req.headers['webhook-id']));
      first ??= Date.now();
      last = Date.now();
      res.writeHead(204).end();
      if (ids.size >= count) allArrived();
    });
  });
  const before = await costSnapshot(stack);
  const started = Date.now();
  await new Promise((resolve) => server.listen(Number(new URL(url).port), '127.0.0.1', () => resolve(undefined)));
  /** @type {NodeJS.Timeout | undefined} */
  let deadline;
  try {
    // Every parked delivery arrived, or the deadline passed.
    await Promise.race([arrived, new Promise((resolve) => (deadline = setTimeout(resolve, RECOVER_MAX_S * 1000)))]);
    const after = await costSnapshot(stack);
    return { delivered: ids.size, started, first, last, cost: costPer(before, after, ids.size) };
  } finally {
    clearTimeout(deadline);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

async function main() {
  const stack = await startStack({
    services: ['moderator', 'notifier', 'gateway'],
    env: {
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
      ...(PARK_S !== undefined ? { DELIVERY_BACKLOG_PARK_MS: String(PARK_S * 1000) } : {}),
    },
  });
  try {
    const base = `http://127.0.0.1:${stack.ports.gateway}/api/v1`;
    const deadUrl = await refusingUrl();
    const dead = await createEndpoint(base, stack.apiKey, deadUrl);
    const tenantId = await tenantIdOf(stack, dead.id);
    // Two windows: the first may hold the store's deferred maintenance after start-up; the second is the peer.
    const settling = await idleCost(stack, WINDOW_S);
    const peer = await idleCost(stack, WINDOW_S);
    process.stdout.write(
      `\nidle stack, ${WINDOW_S} s windows: ${(settling.cores * 100).toFixed(1)}%, then (the peer) ${peer.text}\n`,
    );
    await seedRetries(stack, tenantId, dead.id, BACKLOG, { fromMs: 5000, overMs: 60000 });
    process.stdout.write(`${BACKLOG} retries written for an endpoint that refuses connections, due within a minute\n`);
    const parking = await idleCost(stack, PARKING_S);
    process.stdout.write(`  the ${PARKING_S} s in which they come due: ${parking.text}\n`);
    const held = [];
    for (let window = 0; window < WINDOWS; window += 1) {
      const cost = await idleCost(stack, WINDOW_S);
      held.push(cost);
      process.stdout.write(`  holding, window ${window + 1}: ${cost.text}\n`);
    }
    const mean = held.reduce((sum, w) => sum + w.cores, 0) / held.length;
    const where = await whereTheyWait(stack, dead.id);
    process.stdout.write(
      `coming due: ${(parking.cores * 100).toFixed(1)}% of a core over ${PARKING_S} s ` +
        `(${(parking.cores * PARKING_S).toFixed(1)} CPU seconds)\n` +
        `holding the backlog: ${(mean * 100).toFixed(1)}% of a core on average over ${WINDOWS} windows ` +
        `(peer ${(peer.cores * 100).toFixed(1)}%; goal < 5%)\n` +
        `the backlog at the end: ${where.parked} parked, ${where.pending} pending and not parked, ${where.other} in ` +
        `other states\n`,
    );
    if (RECOVER) {
      const back = await recover(stack, deadUrl, where.parked);
      const s = (at) => (at === undefined ? 'never' : `${((at - back.started) / 1000).toFixed(1)} s`);
      const rate =
        back.delivered / Math.max(0.001, ((back.last ?? back.started) - (back.first ?? back.started)) / 1000);
      process.stdout.write(
        `the endpoint answers again: first webhook after ${s(back.first)}, ${back.delivered} of the ${where.parked} ` +
          `parked delivered after ${s(back.last)} (${rate.toFixed(0)}/s from the first)\n` +
          `per delivery while they went out: ${formatCost(back.cost)}\n`,
      );
    }
  } finally {
    await stack.stop();
  }
}

module.exports = { main };
