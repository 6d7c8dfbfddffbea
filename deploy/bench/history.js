'use strict';
// `npm run bench -- history`: persisted /moderate throughput after the store holds BENCH_HISTORY_SMALL (1,000) and
// then BENCH_HISTORY_LARGE (100,000) records with their events, in one run. A hot path whose cost grows with history
// shows as a lower figure at the larger size. The preload writes records and events through the driver in batches,
// shaped as the moderator stores them, for other tenants' users and for the benchmark tenant alike.
const { withStackDb } = require('./stack');
const { measure, outboxDrained, storedRecord, text1k } = require('./moderate');

const SMALL = Number(process.env.BENCH_HISTORY_SMALL || 1000);
const LARGE = Number(process.env.BENCH_HISTORY_LARGE || 100000);
const BATCH = 1000;

async function preload(db, from, to) {
  const records = db.collection('records');
  const events = db.collection('events');
  for (let start = from; start < to; start += BATCH) {
    const end = Math.min(to, start + BATCH);
    const recordDocs = [];
    const eventDocs = [];
    for (let i = start; i < end; i += 1) {
      const tenantId = `ten_history${i % 50}`;
      const recordId = `rec_history${i}`;
      const userId = `usr_history${i % 5000}`;
      const record = storedRecord({
        _id: recordId,
        tenantId,
        clientId: `history-${i}`,
        userId,
        sort: `01HISTORY${String(i).padStart(17, '0')}`,
        i,
      });
      const at = record.createdAt;
      recordDocs.push(record);
      for (const version of [1, 2]) {
        const id = `01HISTORY${String(i).padStart(16, '0')}${version}`;
        eventDocs.push({
          _id: id,
          id,
          tenantId,
          stream: `record-${recordId}`,
          version,
          occurredAt: at.toISOString(),
          correlationId: 'history',
          type: version === 1 ? 'RecordUpserted' : 'RecordModerated',
          data: { recordId },
          published: true,
        });
      }
    }
    await records.insertMany(recordDocs, { ordered: false });
    await events.insertMany(eventDocs, { ordered: false });
  }
}

async function main() {
  await withStackDb(['moderator', 'gateway'], async (stack, db) => {
    const auth = { authorization: `Bearer ${stack.apiKey}` };
    const base = `http://127.0.0.1:${stack.ports.gateway}/api/v1/moderate`;
    let n = 0;
    const body = () => {
      n += 1;
      return {
        clientId: `bench-h-${n}`,
        name: `Post ${n}`,
        entity: 'post',
        content: text1k(n),
        user: { clientId: `user-${n % 500}`, username: `u${n % 500}` },
      };
    };
    const rows = [];
    let stored = 0;
    for (const size of [SMALL, LARGE]) {
      const started = Date.now();
      await preload(db, stored, size);
      stored = size;
      const preloadS = ((Date.now() - started) / 1000).toFixed(0);
      const result = await measure(`moderate with ${size} records stored`, base, {
        body,
        headers: auth,
        settle: () => outboxDrained(db),
      });
      rows.push({ ...result, preloadS });
    }
    process.stdout.write('\n/moderate (persisted, with a user) against the size of history\n');
    // eslint-disable-next-line no-console
    console.table(
      rows.map((r) => ({
        name: r.name,
        'preload s': r.preloadS,
        'max req/s': r.max.rps,
        'p50 ms': r.max.p50,
        'p99 ms': r.max.p99,
        'half-rate p99 ms': r.half.p99,
        'non-2xx': r.max.non2xx + r.half.non2xx,
      })),
    );
    const [small, large] = rows;
    if (small && large) {
      process.stdout.write(
        `goal: throughput at ${LARGE} ≥ 0.8× throughput at ${SMALL} (${(large.max.rps / small.max.rps).toFixed(2)})\n`,
      );
    }
  });
}

module.exports = { main };
