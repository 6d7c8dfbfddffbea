'use strict';
// Tenant A's load for `npm run bench -- noisy`, in a process of its own so that building and sending its 100 KB
// bodies does not delay the timers and sockets that measure tenant B. Usage: BENCH_NOISY_KEY=<A's API key>
// node noisy-tenant.js '<json options>'; prints one line of JSON: { rps, p99, non2xx }.
const autocannon = require('autocannon');
const { paced } = require('./paced');

async function main() {
  /** @type {{ url: string; connections: number; durationS: number; rate: number }} */
  const options = JSON.parse(process.argv[2] ?? '{}');
  const headers = { authorization: `Bearer ${process.env.BENCH_NOISY_KEY}` };
  const text = `word999 ${'a'.repeat(99_992)}`;
  let n = 0;
  const body = () => ({ clientId: `noisy-${n++ % 500}`, name: 'n', entity: 'post', content: { text } });
  // A rate: tenant A paced at that many records a second instead of as fast as it can.
  const result = options.rate
    ? await paced(options.url, {
        body,
        headers,
        rate: options.rate,
        durationS: options.durationS,
        connections: options.connections,
      })
    : await new Promise((resolve, reject) => {
        autocannon(
          {
            url: options.url,
            method: 'POST',
            connections: options.connections,
            duration: options.durationS,
            headers: { ...headers, 'content-type': 'application/json' },
            requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify(body()) }) }],
          },
          (err, res) =>
            err ? reject(err) : resolve({ rps: res.requests.average, p99: res.latency.p99, non2xx: res.non2xx }),
        );
      });
  process.stdout.write(`${JSON.stringify({ rps: result.rps, p99: result.p99, non2xx: result.non2xx })}\n`);
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err.message}\n`);
  process.exit(1);
});
