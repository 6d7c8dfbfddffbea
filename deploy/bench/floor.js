'use strict';
// The store floor: what the MongoDB-wire store itself answers at a given concurrency, through the same driver the
// services use. Each request is one findOne by _id plus one insertOne, the least a persisted moderation can cost.
const crypto = require('node:crypto');
const { MongoClient } = require('mongodb');
const { percentile } = require('./percentile');

/**
 * Runs `connections` loops for `durationS` (or at most `rate` requests/s overall); returns { rps, p50, p99 }.
 * @param {string} mongoUrl
 * @param {{ connections: number; durationS: number; rate?: number }} options
 */
async function storeFloor(mongoUrl, { connections, durationS, rate }) {
  const client = new MongoClient(mongoUrl, { maxPoolSize: connections });
  await client.connect();
  try {
    /** @type {import('mongodb').Collection<{ _id: string; n?: number; text?: string }>} */
    const collection = client.db('vigil_bench_floor').collection('floor');
    await collection.insertOne({ _id: 'seed', n: 0 });
    const latencies = [];
    const started = Date.now();
    const until = started + durationS * 1000;
    let issued = 0;
    const loop = async () => {
      while (Date.now() < until) {
        if (rate) {
          const due = ((Date.now() - started) / 1000) * rate;
          if (issued >= due) {
            await new Promise((resolve) => setTimeout(resolve, 2));
            continue;
          }
        }
        issued += 1;
        const t0 = performance.now();
        await collection.findOne({ _id: 'seed' });
        await collection.insertOne({ _id: crypto.randomUUID(), text: 'x'.repeat(1000) });
        latencies.push(performance.now() - t0);
      }
    };
    await Promise.all(Array.from({ length: connections }, loop));
    latencies.sort((a, b) => a - b);
    return {
      rps: Math.round(latencies.length / durationS),
      p50: Math.round(percentile(latencies, 50)),
      p99: Math.round(percentile(latencies, 99)),
    };
  } finally {
    await client
      .db('vigil_bench_floor')
      .dropDatabase()
      .catch(() => undefined);
    await client.close();
  }
}

module.exports = { storeFloor };
