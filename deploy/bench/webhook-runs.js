'use strict';
// The open-loop ingest runs of the end-to-end benchmarks (e2e, scale, tdb): ingests at a rate, a bounded wait for
// their webhooks at a local receiver, and the latencies and rates of what arrived.
const http = require('node:http');
const { waitUntil } = require('../local/util');
const { text1k } = require('./moderate');
const { paced } = require('./paced');
const { percentile } = require('./percentile');

/** The ingest body of a record: a 1 KB text post. */
const ingestBody = (clientId) => ({ clientId, name: `Post ${clientId}`, entity: 'post', content: { text: text1k(0) } });

/**
 * Ingests at `rate`/s for `durationS` through the gateway at `base` (open loop); returns clientId → when its ingest
 * was due, for those accepted.
 */
async function ingestAt(base, apiKey, prefix, rate, durationS) {
  const sentAt = new Map();
  await paced(`${base}/ingest`, {
    body: (i) => ingestBody(`${prefix}-${i}`),
    headers: { authorization: `Bearer ${apiKey}` },
    rate,
    durationS,
    connections: 64,
    onResult: (i, dueAt, status) => {
      if (status === 202) sentAt.set(`${prefix}-${i}`, dueAt);
    },
  });
  return sentAt;
}

/** Waits (bounded) for a webhook of every accepted record; a pipeline that falls behind is a figure, not a failure. */
async function waitForWebhooks(sentAt, received, timeoutMs) {
  await waitUntil(() => [...sentAt.keys()].every((id) => received.has(id)), {
    timeoutMs,
    intervalMs: 200,
    what: 'every webhook',
  }).catch(() => undefined);
}

/** Latencies and rates of the records in `sentAt`, and deliveries per 10 s window (the last, partial one left out). */
function figures(sentAt, received) {
  const done = [...sentAt].filter(([id]) => received.has(id));
  const latencies = done.map(([id, t0]) => received.get(id) - t0).sort((a, b) => a - b);
  const first = Math.min(...done.map(([, t0]) => t0));
  const last = Math.max(...done.map(([id]) => received.get(id)));
  const windows = [];
  for (let from = first; from + 10000 <= last; from += 10000) {
    windows.push(done.filter(([id]) => received.get(id) >= from && received.get(id) < from + 10000).length / 10);
  }
  return {
    accepted: sentAt.size,
    delivered: done.length,
    p50: Math.round(percentile(latencies, 50)),
    p99: Math.round(percentile(latencies, 99)),
    rate: done.length / Math.max(0.001, (last - first) / 1000),
    slowestWindow: windows.length > 0 ? Math.min(...windows) : NaN,
    windows,
  };
}

/** A webhook receiver noting when each record's first webhook arrived, and every arrival in order. */
async function startReceiver() {
  const received = new Map(); // clientId → epoch ms
  /** @type {number[]} */
  const arrivals = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      arrivals.push(Date.now());
      try {
        const clientId = JSON.parse(body).payload?.clientId;
        if (clientId && !received.has(clientId)) received.set(clientId, Date.now());
      } catch {
        // not ours
      }
      res.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  return {
    received,
    arrivals,
    url: `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}/hook`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

module.exports = { ingestBody, ingestAt, waitForWebhooks, figures, startReceiver };
