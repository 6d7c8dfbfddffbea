'use strict';
// Open-loop load at a steady rate: request i is sent at start + i / rate, whatever the answers before it, over at most
// `connections` keep-alive connections. Latency counts from the time a request was due, so a server (or a client) that
// falls behind is not hidden. autocannon's `overallRate` instead lets every connection send its share at the start of
// each second, which turns a half rate into one burst per second.
const http = require('node:http');
const { percentile } = require('./percentile');

function send(agent, url, headers, payload) {
  return new Promise((resolve) => {
    const req = http.request(url, { method: 'POST', agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve(0));
    });
    req.setTimeout(30000, () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(0));
    req.end(payload);
  });
}

/**
 * POSTs `body(i)` as JSON to `url` at `rate` requests/s for `durationS`; returns { rps, p50, p99, non2xx, errors, latencies }.
 * `onResult(i, dueAt, status)`, if given, hears each answer (`dueAt` in epoch milliseconds, status 0 for no answer).
 */
/**
 * @param {string} url
 * @param {{
 *   body: (i: number) => unknown;
 *   headers?: Record<string, string>;
 *   rate: number;
 *   durationS: number;
 *   connections: number;
 *   onResult?: (i: number, dueAt: number, status: number) => void;
 * }} options
 */
async function paced(url, { body, headers = {}, rate, durationS, connections, onResult }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const total = Math.max(1, Math.round(rate * durationS));
  const latencies = [];
  let non2xx = 0;
  let errors = 0;
  const started = performance.now();
  const inFlight = [];
  try {
    for (let i = 0; i < total; i += 1) {
      const due = started + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
      const payload = JSON.stringify(body(i));
      const request = send(
        agent,
        url,
        { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers },
        payload,
      ).then((status) => {
        latencies.push(performance.now() - due);
        onResult?.(i, performance.timeOrigin + due, status);
        if (status === 0) errors += 1;
        else if (status < 200 || status >= 300) non2xx += 1;
      });
      inFlight.push(request);
    }
    await Promise.all(inFlight);
  } finally {
    agent.destroy();
  }
  const elapsedS = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    rps: Math.round(latencies.length / elapsedS),
    p50: Math.round(percentile(latencies, 50)),
    p99: Math.round(percentile(latencies, 99)),
    non2xx,
    errors,
    /** Every latency, ascending (milliseconds), for pooling rounds. */
    latencies,
  };
}

module.exports = { paced };
