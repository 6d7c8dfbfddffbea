'use strict';
// `npm run bench -- e2e`: ingest → webhook received latency (p50/p99) at a steady rate for BENCH_E2E_DURATION_S
// seconds (default 60), and deliveries/s, through all three services, at BENCH_E2E_RATE (default 200/s); then the
// highest rate the pipeline sustains (BENCH_E2E_BURST ingests, default 3,000, sent at once: records webhooked per
// second from the first send to the last webhook); then the maximum accepted ingest rate, for comparison. The steady
// run goes first, because a burst leaves the moderator a backlog that would turn the latencies into queueing time.
const http = require('node:http');
const { startStack } = require('./stack');
const { waitUntil } = require('../local/util');
const { load, summary, text1k } = require('./moderate');
const { percentile } = require('./percentile');

const DURATION_S = Number(process.env.BENCH_E2E_DURATION_S || 60);
const RATE = Number(process.env.BENCH_E2E_RATE || 200);
const BURST = Number(process.env.BENCH_E2E_BURST || 3000);

async function main() {
  const received = new Map(); // clientId → time received
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      try {
        const event = JSON.parse(body);
        if (event.payload?.clientId && !received.has(event.payload.clientId))
          received.set(event.payload.clientId, Date.now());
      } catch {
        // not ours
      }
      res.writeHead(204).end();
    });
  });
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const stack = await startStack({
    services: ['moderator', 'notifier', 'gateway'],
    env: { WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32' },
  });
  try {
    const base = `http://127.0.0.1:${stack.ports.gateway}/api/v1`;
    const headers = { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' };
    const created = await fetch(`${base}/webhook-endpoints`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: `http://127.0.0.1:${receiver.address().port}/hook` }),
    });
    if (created.status >= 300) throw new Error(`creating the webhook endpoint answered ${created.status}`);
    const body = (i) => ({ clientId: `e2e-${i}`, name: `Post ${i}`, entity: 'post', content: { text: text1k(i) } });
    const rate = RATE;
    const sentAt = new Map();
    const started = Date.now();
    let sent = 0;
    const inFlight = new Set();
    while (Date.now() - started < DURATION_S * 1000) {
      const due = Math.floor(((Date.now() - started) / 1000) * rate);
      while (sent < due) {
        const clientId = `e2e-${sent++}`;
        const t0 = Date.now();
        const p = fetch(`${base}/ingest`, { method: 'POST', headers, body: JSON.stringify({ ...body(0), clientId }) })
          .then((res) => {
            if (res.status === 202) sentAt.set(clientId, t0);
          })
          .catch(() => undefined)
          .finally(() => inFlight.delete(p));
        inFlight.add(p);
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await Promise.all(inFlight);
    const deadline = Date.now() + 120000;
    const done = () => [...sentAt.keys()].every((id) => received.has(id));
    while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    const latencies = [...sentAt]
      .filter(([id]) => received.has(id))
      .map(([id, t0]) => received.get(id) - t0)
      .sort((a, b) => a - b);
    const firstReceipt = Math.min(...[...received.values()]);
    const lastReceipt = Math.max(...[...received.values()]);
    // The burst: every ingest at once (bounded concurrency), then wait for every webhook.
    const burstIds = Array.from({ length: BURST }, (_, i) => `burst-${i}`);
    const burstStarted = Date.now();
    const accepted = [];
    for (let start = 0; start < burstIds.length; start += 64) {
      await Promise.all(
        burstIds.slice(start, start + 64).map((clientId) =>
          fetch(`${base}/ingest`, { method: 'POST', headers, body: JSON.stringify({ ...body(0), clientId }) })
            .then((res) => res.status === 202 && accepted.push(clientId))
            .catch(() => undefined),
        ),
      );
    }
    // A pipeline that falls behind is a figure, not a failure: what arrived by the deadline is counted.
    await waitUntil(() => accepted.every((id) => received.has(id)), {
      timeoutMs: 300000,
      what: 'every burst webhook',
    }).catch(() => undefined);
    const burstDone = accepted.filter((id) => received.has(id));
    const burstEnd = Math.max(...burstDone.map((id) => received.get(id)));
    const sustained = burstDone.length / Math.max(0.001, (burstEnd - burstStarted) / 1000);
    const max = summary(await load(`${base}/ingest`, { body: (i) => body(1e7 + i), headers }));
    process.stdout.write(
      `\ningest → webhook benchmark: ${DURATION_S} s at ${rate} ingests/s (${((100 * rate) / max.rps).toFixed(1)}% of the ${max.rps} req/s maximum ingest rate)\n` +
        `webhooks received: ${latencies.length} of ${sentAt.size} accepted\n` +
        `latency ingest → webhook: p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms (goal p99 ≤ 1000 ms)\n` +
        `deliveries/s: ${(latencies.length / Math.max(1, (lastReceipt - firstReceipt) / 1000)).toFixed(0)} (goal: ≥ 200 records/s sustained, nothing lost)\n` +
        `highest sustained pipeline rate: ${sustained.toFixed(0)} records/s (${burstDone.length} of ${accepted.length} burst ingests webhooked)\n`,
    );
  } finally {
    await stack.stop();
    await new Promise((resolve) => receiver.close(resolve));
  }
}

module.exports = { main };
