'use strict';
// `npm run bench -- ingest`: accepted /ingest req/s and p50/p99 (~1 KB records) next to Kafka's own producer perf
// tool (acks=all, same record size, same broker), then the time from accept to RecordModerated on the events topic.
const { Kafka, logLevel } = require('kafkajs');
const { run } = require('../local/util');
const { kafkaClasspath } = require('../local/kafka');
const { startStack, peakRssMb } = require('./stack');
const { load, summary, text1k } = require('./moderate');
const { percentile } = require('./percentile');

const DURATION_S = Number(process.env.BENCH_DURATION_S || 10);
const MODERATED_RATE = Number(process.env.BENCH_MODERATED_RATE || 10);

async function producerPerf(brokers, records) {
  const out = await run('java', [
    '-Xmx256m',
    '-cp',
    kafkaClasspath(),
    'org.apache.kafka.tools.ProducerPerformance',
    '--topic',
    'bench.producer-perf',
    '--num-records',
    String(records),
    '--record-size',
    '1024',
    '--throughput',
    '-1',
    '--producer-props',
    `bootstrap.servers=${brokers}`,
    'acks=all',
    'enable.idempotence=true',
  ]);
  // Last summary line: "N records sent, X records/sec (Y MB/sec), A ms avg latency, M ms max latency, P50 ms 50th, …"
  const line =
    out
      .trim()
      .split('\n')
      .filter((l) => l.includes('records sent'))
      .pop() || '';
  const num = (re) => Number((re.exec(line) || [])[1]);
  return { rps: Math.round(num(/([\d.]+) records\/sec/)), p50: num(/(\d+) ms 50th/), p99: num(/(\d+) ms 99th/), line };
}

async function main() {
  const stack = await startStack({ services: ['moderator', 'gateway'] });
  const kafka = new Kafka({
    clientId: 'bench',
    brokers: stack.servers.kafkaBrokers.split(','),
    logLevel: logLevel.NOTHING,
  });
  const consumer = kafka.consumer({ groupId: `bench-${Date.now()}` });
  try {
    const url = `http://127.0.0.1:${stack.ports.gateway}/api/v1/ingest`;
    const headers = { authorization: `Bearer ${stack.apiKey}` };
    const body = (i) => ({ clientId: `ing-${i}`, name: `Post ${i}`, entity: 'post', content: { text: text1k(i) } });
    // Accept → RecordModerated first, at a rate the moderator sustains (BENCH_MODERATED_RATE, default 10/s): after the
    // maximum-rate runs the moderator has a backlog of minutes, and the figure would measure the queue.
    const accepted = new Map();
    const latencies = [];
    await consumer.connect();
    await consumer.subscribe({ topic: 'vigil.events.v1', fromBeginning: false });
    const joined = new Promise((resolve) => consumer.on(consumer.events.GROUP_JOIN, resolve));
    await consumer.run({
      eachMessage: async ({ message }) => {
        if (message.headers?.['event-type']?.toString() !== 'RecordModerated') return;
        const event = JSON.parse(String(message.value));
        const at = accepted.get(event.data.recordId);
        if (at !== undefined) {
          latencies.push(Date.now() - at);
          accepted.delete(event.data.recordId);
        }
      },
    });
    await joined;
    const total = MODERATED_RATE * DURATION_S;
    const started = Date.now();
    let sent = 0;
    const inFlight = new Set();
    while (sent < total) {
      const due = Math.floor(((Date.now() - started) / 1000) * MODERATED_RATE);
      while (sent < Math.min(due, total)) {
        const i = 2e6 + sent++;
        const t0 = Date.now();
        const p = fetch(url, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: JSON.stringify(body(i)),
        })
          .then(async (res) => {
            if (res.status === 202) accepted.set(/** @type {{ id: string }} */ (await res.json()).id, t0);
          })
          .catch(() => undefined)
          .finally(() => inFlight.delete(p));
        inFlight.add(p);
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await Promise.all(inFlight);
    const deadline = Date.now() + 120000;
    while (accepted.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    latencies.sort((a, b) => a - b);
    await load(url, { body, headers }); // warm-up
    const ingest = summary(await load(url, { body: (i) => body(i + 1e6), headers }));
    const perf = await producerPerf(stack.servers.kafkaBrokers, Math.max(20000, ingest.rps * DURATION_S));

    process.stdout.write(`\n/ingest benchmark: ${DURATION_S} s per run, ~1 KB records\n`);
    // eslint-disable-next-line no-console
    console.table([
      {
        name: '/ingest (202 after Kafka ack)',
        'req/s': ingest.rps,
        'p50 ms': ingest.p50,
        'p99 ms': ingest.p99,
        'non-2xx': ingest.non2xx,
      },
      {
        name: 'kafka ProducerPerformance acks=all',
        'req/s': perf.rps,
        'p50 ms': perf.p50,
        'p99 ms': perf.p99,
        'non-2xx': 0,
      },
    ]);
    process.stdout.write(
      `ratio /ingest to producer perf: ${(ingest.rps / perf.rps).toFixed(2)} (goal ≥ 0.3)\n` +
        `accept → RecordModerated at ${MODERATED_RATE} req/s: p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms ` +
        `(${latencies.length} of ${latencies.length + accepted.size} seen)\n` +
        `peak RSS: gateway ${peakRssMb(stack.pids.gateway)} MB, moderator ${peakRssMb(stack.pids.moderator)} MB\n`,
    );
  } finally {
    await consumer.disconnect().catch(() => undefined);
    await stack.stop();
  }
}

module.exports = { main };
