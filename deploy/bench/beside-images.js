'use strict';
// What the benchmarks of image work (images.js, ocr.js) share: the service's image path made ready with their rules,
// records with one image each sent as fast as the service takes them, and text-only /moderate at a steady half of its
// maximum rate from a process of its own, its p99 pooled over rounds alone and beside the image load.
const autocannon = require('autocannon');
const { waitUntil } = require('../local/util');
const { pacedInChild } = require('./paced-child');
const { percentile } = require('./percentile');

const TEXT_CONNECTIONS = 16;
const TEXT = 'a quiet afternoon by the river, with coffee and music '.repeat(18);

/** POSTs `body(n)` as JSON to `url` over `connections` connections for `durationS`, each as soon as one answers. */
function closedLoop(url, { body, headers, connections, durationS }) {
  return new Promise((resolve, reject) => {
    let n = 0;
    autocannon(
      {
        url,
        method: 'POST',
        connections,
        duration: durationS,
        headers: { 'content-type': 'application/json', ...headers },
        requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify(body(n++)) }) }],
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
  });
}

/**
 * Puts `rules` for the stack's tenant, then sends the record of image `probe.image` until its answer gives a reason
 * that starts with `probe.reason` (model loaded or OCR ready, rules applied). Record i's image is at `imageUrl(i)`.
 * `imageLoad(offset, connections, durationS)` sends such records, as fast as the service takes them, from record
 * `offset` on.
 * @param {Awaited<ReturnType<typeof import('./stack').startStack>>} stack
 * @param {{ rules: unknown[]; imageUrl: (i: number) => string; probe: { image: number; reason: string; what: string } }} options
 */
async function imagePath(stack, { rules, imageUrl, probe }) {
  const api = `http://127.0.0.1:${stack.ports.gateway}/api/v1`;
  const headers = { authorization: `Bearer ${stack.apiKey}` };
  const json = { ...headers, 'content-type': 'application/json' };
  const put = await fetch(`${api}/rules`, { method: 'PUT', headers: json, body: JSON.stringify({ rules }) });
  if (put.status !== 200) throw new Error(`PUT /rules answered ${put.status}`);
  const imageRecord = (i) => ({
    clientId: `img-${i}`,
    name: `Image post ${i}`,
    entity: 'post',
    content: { text: 'look at this', imageUrls: [imageUrl(i)] },
    passthrough: true,
  });
  await waitUntil(
    async () => {
      const res = await fetch(`${api}/moderate`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify(imageRecord(probe.image)),
      });
      const body = /** @type {{ reasons?: string[] }} */ (await res.json());
      return (body.reasons ?? []).some((reason) => reason.startsWith(probe.reason));
    },
    { timeoutMs: 180000, what: probe.what },
  );
  /** @returns {Promise<import('autocannon').Result>} */
  const imageLoad = (offset, connections, durationS) =>
    closedLoop(`${api}/moderate`, { body: (i) => imageRecord(offset + i), headers, connections, durationS });
  return { api, headers, imageLoad };
}

/**
 * Text-only /moderate at a steady half of the rate it reaches alone (measured first, 5 s), for `durationS` a run,
 * from a process of its own: this one serves the images and sends the image load.
 */
async function halfRateText(stack, durationS) {
  const api = `http://127.0.0.1:${stack.ports.gateway}/api/v1`;
  const textRecord = (i) => ({ clientId: `txt-${i % 2000}`, name: `Post ${i}`, entity: 'post', content: TEXT });
  const max = await closedLoop(`${api}/moderate`, {
    body: textRecord,
    headers: { authorization: `Bearer ${stack.apiKey}` },
    connections: TEXT_CONNECTIONS,
    durationS: 5,
  });
  const rate = Math.max(1, Math.floor(max.requests.average / 2));
  const run = () =>
    pacedInChild(
      {
        url: `${api}/moderate`,
        rate,
        durationS,
        connections: TEXT_CONNECTIONS,
        clientIdPrefix: 'txt-',
        clientIds: 2000,
        content: TEXT,
      },
      stack.apiKey,
    );
  return { rate, maxRate: Math.round(max.requests.average), run };
}

/** Paced runs as one: the p99 of all their latencies, their non-2xx answers and errors, and each run's p99. */
function pooled(runs) {
  return {
    p99: Math.round(
      percentile(
        runs.flatMap((run) => run.latencies).sort((a, b) => a - b),
        99,
      ),
    ),
    non2xx: runs.reduce((sum, run) => sum + run.non2xx, 0),
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
    rounds: runs.map((run) => run.p99).join(', '),
  };
}

module.exports = { imagePath, halfRateText, pooled };
