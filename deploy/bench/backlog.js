'use strict';
// `npm run bench -- backlog`: what an idle stack costs while it holds a dead endpoint's due backlog. One endpoint that
// refuses connections, BENCH_BACKLOG (default 50,000) retries for it written as the notifier writes them, all due within
// the first minute; then the stack's CPU and store commands in BENCH_BACKLOG_WINDOWS (default 6) windows of 20 s, next
// to the same stack's in the windows before they were written (the peer; goal: under 5 % of a core, as the e2e
// benchmark's idle stack).
const { startStack } = require('./stack');
const { idleCost } = require('./cost');
const { seedRetries, createEndpoint, refusingUrl, tenantIdOf } = require('./e2e');

const BACKLOG = Number(process.env.BENCH_BACKLOG || 50000);
const WINDOWS = Number(process.env.BENCH_BACKLOG_WINDOWS || 6);
const WINDOW_S = 20;

async function main() {
  const stack = await startStack({
    services: ['moderator', 'notifier', 'gateway'],
    env: { WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32' },
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
    const held = [];
    for (let window = 0; window < WINDOWS; window += 1) {
      const cost = await idleCost(stack, WINDOW_S);
      held.push(cost);
      process.stdout.write(`  window ${window + 1}: ${cost.text}\n`);
    }
    const mean = held.reduce((sum, w) => sum + w.cores, 0) / held.length;
    process.stdout.write(
      `holding the backlog: ${(mean * 100).toFixed(1)}% of a core on average over ${WINDOWS} windows ` +
        `(peer ${(peer.cores * 100).toFixed(1)}%; goal < 5%)\n`,
    );
  } finally {
    await stack.stop();
  }
}

module.exports = { main };
