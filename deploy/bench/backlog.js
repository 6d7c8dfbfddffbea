'use strict';
// `npm run bench -- backlog`: what an idle stack costs while it holds a dead endpoint's due backlog. One endpoint that
// refuses connections, BENCH_BACKLOG (default 50,000) retries for it written as the notifier writes them, all due within
// the first minute. The stack's CPU and store commands over the BENCH_BACKLOG_PARKING_S (default 90) seconds in which
// they come due and are parked, then in BENCH_BACKLOG_WINDOWS (default 6) windows of 20 s while it holds them, next to
// the same stack's in the windows before they were written (the peer; goal while holding: under 5 % of a core, as the
// e2e benchmark's idle stack). BENCH_BACKLOG_PARK_S sets the notifier's DELIVERY_BACKLOG_PARK_MS (default an hour), to
// watch a parked backlog come due again within a run.
const { MongoClient } = require('mongodb');
const { startStack } = require('./stack');
const { idleCost } = require('./cost');
const { seedRetries, createEndpoint, refusingUrl, tenantIdOf } = require('./e2e');

const BACKLOG = Number(process.env.BENCH_BACKLOG || 50000);
const WINDOWS = Number(process.env.BENCH_BACKLOG_WINDOWS || 6);
const PARKING_S = Number(process.env.BENCH_BACKLOG_PARKING_S || 90);
const PARK_S = process.env.BENCH_BACKLOG_PARK_S ? Number(process.env.BENCH_BACKLOG_PARK_S) : undefined;
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
    const dead = await createEndpoint(base, stack.apiKey, await refusingUrl());
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
  } finally {
    await stack.stop();
  }
}

module.exports = { main };
