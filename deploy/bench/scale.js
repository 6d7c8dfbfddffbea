'use strict';
// `npm run bench -- scale`: the steady ingest → webhook pipeline with one and with two replicas of each service on
// the same machine (one Kafka node, one store). The rates are fractions of a peer measured in the same run: the
// persisted /moderate maximum of the one-replica stack (the two-replica stack runs the same loads first, to warm up
// the same way). For each replica count and each rate: the delivery rate,
// webhook latency p50/p99, CPU per delivered record by process (from /proc of the child processes) and store commands
// by service; then the idle stack's CPU and store commands per second; then, in a steady run at the highest rate, a
// moderator is SIGKILLed, started again BENCH_SCALE_DOWN_S (default 15) later, and the longest gap between two webhooks
// is printed for the time it was down and for the time after its restart (a rebalance waits for the killed member's
// session).
//
// BENCH_SCALE_LOADS (default 0.25,0.6: fractions of the peer), BENCH_SCALE_RATE (a fixed rate in ingests/s instead),
// BENCH_SCALE_DURATION_S (default 60), BENCH_SCALE_WARM_S (default 30), BENCH_SCALE_IDLE_S (default 20),
// BENCH_SCALE_SESSION_TIMEOUT_MS (default: the services' own KAFKA_SESSION_TIMEOUT_MS).
const { startStack } = require('./stack');
const { startRoundRobinProxy } = require('../local/round-robin-proxy');
const { load, summary, text1k } = require('./moderate');
const { ingestAt, waitForWebhooks, figures, startReceiver } = require('./webhook-runs');
const { costSnapshot, costPer, formatCost, idleCost, quiet } = require('./cost');

const LOADS = (process.env.BENCH_SCALE_LOADS ?? '0.25,0.6').split(',').filter(Boolean).map(Number);
const FIXED_RATE = process.env.BENCH_SCALE_RATE ? Number(process.env.BENCH_SCALE_RATE) : undefined;
const IDLE_S = Number(process.env.BENCH_SCALE_IDLE_S || 20);
const DURATION_S = Number(process.env.BENCH_SCALE_DURATION_S || 60);
const WARM_S = Number(process.env.BENCH_SCALE_WARM_S || 30);
const DOWN_S = Number(process.env.BENCH_SCALE_DOWN_S || 15);
/** The moderator is killed this long into the second steady run. */
const KILL_AFTER_S = 15;
const SESSION_TIMEOUT_MS = process.env.BENCH_SCALE_SESSION_TIMEOUT_MS;

/** The longest time between two arrivals in [from, to), counting from `from` and up to `to`, in ms. */
function longestGap(arrivals, from, to) {
  let previous = from;
  let longest = 0;
  for (const at of arrivals) {
    if (at < from) continue;
    if (at >= to) break;
    longest = Math.max(longest, at - previous);
    previous = at;
  }
  return Math.max(longest, to - previous);
}

/** The persisted /moderate maximum through `base` (closed loop), after a run that warms the path: the peer. */
async function moderatePeer(base, apiKey) {
  const body = (prefix) => (i) => ({
    clientId: `${prefix}-${i}`,
    name: `Post ${i}`,
    entity: 'post',
    content: { text: text1k(i) },
  });
  const headers = { authorization: `Bearer ${apiKey}` };
  await load(`${base}/moderate`, { body: body('peer-warm'), headers });
  return summary(await load(`${base}/moderate`, { body: body('peer'), headers })).rps;
}

/**
 * One stack of `replicas` of each service: steady runs at each rate (from `rateOf(peer)`; the peer is measured here
 * when not given), the idle stack, then a steady run at the highest rate with a moderator SIGKILLed.
 */
async function measure(replicas, givenPeer, say) {
  const receiver = await startReceiver();
  const stack = await startStack({
    services: ['moderator', 'notifier', 'gateway'],
    replicas,
    env: {
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
      ...(SESSION_TIMEOUT_MS ? { KAFKA_SESSION_TIMEOUT_MS: SESSION_TIMEOUT_MS } : {}),
    },
  });
  // Several gateways take turns behind one port, as `npm run up -- --replicas N` serves them.
  const proxy = replicas > 1 ? await startRoundRobinProxy({ port: 0, backends: stack.ports.gateways }) : undefined;
  try {
    const base = `http://127.0.0.1:${proxy ? proxy.port : stack.ports.gateway}/api/v1`;
    const key = stack.apiKey;
    const res = await fetch(`${base}/webhook-endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url }),
    });
    if (res.status !== 201) throw new Error(`creating the webhook endpoint answered ${res.status}`);
    // Both stacks run the peer's /moderate loads, so each starts its measured runs with the same history (a fresh
    // Kafka, store and services of their own, the same JIT warm-up); the second one's rates come from the first's.
    const measured = await moderatePeer(base, key);
    const peer = givenPeer ?? measured;
    if (givenPeer === undefined) say(`peer: persisted /moderate maximum ${peer} req/s with 1 of each`);
    else say(`  the same /moderate loads with ${replicas} of each (not the peer): ${measured} req/s`);
    await quiet(stack);
    const rates = FIXED_RATE ? [FIXED_RATE] : LOADS.map((share) => Math.max(1, Math.round(peer * share)));
    const top = Math.max(...rates);

    await waitForWebhooks(await ingestAt(base, key, 'warm', top, WARM_S), receiver.received, 120000);
    await quiet(stack);
    /** @type {Array<{ rate: number, steady: ReturnType<typeof figures>, cost: ReturnType<typeof costPer> }>} */
    const runs = [];
    for (const rate of rates) {
      const before = await costSnapshot(stack);
      const sent = await ingestAt(base, key, `steady-${rate}`, rate, DURATION_S);
      await waitForWebhooks(sent, receiver.received, 120000);
      const steady = figures(sent, receiver.received);
      const cost = costPer(before, await costSnapshot(stack), steady.delivered);
      say(
        `${replicas} of each at ${rate}/s (${(rate / peer).toFixed(2)}× the peer): ${steady.delivered} of ` +
          `${steady.accepted} webhooked at ${steady.rate.toFixed(1)}/s, p50 ${steady.p50} ms, p99 ${steady.p99} ms`,
      );
      say(`  per delivered record: ${formatCost(cost)}`);
      runs.push({ rate, steady, cost });
      await quiet(stack);
    }
    const idle = await idleCost(stack, IDLE_S);
    say(`  idle, ${replicas} of each, over ${IDLE_S} s: ${idle.text}`);

    // A steady run at the highest rate with the first moderator SIGKILLed KILL_AFTER_S in, and started again DOWN_S
    // later.
    const run = ingestAt(base, key, 'kill', top, DURATION_S);
    await new Promise((resolve) => setTimeout(resolve, KILL_AFTER_S * 1000));
    const killedAt = Date.now();
    await stack.kill('moderator');
    await new Promise((resolve) => setTimeout(resolve, DOWN_S * 1000));
    const restartedAt = Date.now();
    await stack.restart('moderator');
    const killSent = await run;
    await waitForWebhooks(killSent, receiver.received, 180000);
    const kill = figures(killSent, receiver.received);
    const lastArrival = receiver.arrivals.at(-1) ?? restartedAt;
    say(
      `  a moderator SIGKILLed at ${top}/s: ${kill.delivered} of ${kill.accepted} webhooked, p99 ${kill.p99} ms; ` +
        `longest gap in deliveries while it was down (${DOWN_S} s) ` +
        `${longestGap(receiver.arrivals, killedAt, restartedAt)} ms, after its restart ` +
        `${longestGap(receiver.arrivals, restartedAt, Math.max(lastArrival, restartedAt))} ms`,
    );
    return { peer, runs, idle };
  } finally {
    await proxy?.close();
    await stack.stop();
    await receiver.close();
  }
}

async function main() {
  const out = [];
  const say = (line) => {
    out.push(line);
    process.stdout.write(`${line}\n`);
  };
  say(
    `scale benchmark: ${FIXED_RATE ? `${FIXED_RATE} ingests/s` : `${LOADS.join('× and ')}× the peer`} for ` +
      `${DURATION_S} s, session timeout ${SESSION_TIMEOUT_MS ?? "the services' default"}`,
  );
  const one = await measure(1, undefined, say);
  const two = await measure(2, one.peer, say);
  for (const [index, single] of one.runs.entries()) {
    const double = two.runs[index];
    if (!double) continue;
    say(
      `at ${single.rate}/s, 2 replicas against 1: delivery rate ${(double.steady.rate / single.steady.rate).toFixed(2)}×, ` +
        `p50 ${single.steady.p50} → ${double.steady.p50} ms, p99 ${(double.steady.p99 / single.steady.p99).toFixed(2)}× ` +
        `(goal ≤ 1.3×), CPU per record ${(double.cost.cpuTotal / single.cost.cpuTotal).toFixed(2)}× (goal ≤ 1.1×), ` +
        `store commands per record ${single.cost.commandsTotal.toFixed(1)} → ${double.cost.commandsTotal.toFixed(1)}`,
    );
  }
  say(
    `idle stack: ${(100 * one.idle.cores).toFixed(1)}% → ${(100 * two.idle.cores).toFixed(1)}% of a core, ` +
      `${one.idle.commandsPerS.toFixed(1)} → ${two.idle.commandsPerS.toFixed(1)} store commands/s (1 → 2 replicas)`,
  );
}

module.exports = { main };
