'use strict';
// A steady load (paced.js) in a process of its own, so that the benchmark's other work (a load beside it, a local
// image server) cannot delay the timers and sockets that time it. Usage: BENCH_API_KEY=<key> node paced-child.js
// '<json: { url, rate, durationS, connections, clientIdPrefix, clientIds, content }>'; request i posts the record
// `<clientIdPrefix><i % clientIds>` with `content`. Prints one line of JSON: paced()'s result.
const { paced } = require('./paced');
const { run } = require('../local/util');

async function main() {
  /** @type {{ url: string; rate: number; durationS: number; connections: number; clientIdPrefix: string;
   *   clientIds: number; content: string }} */
  const options = JSON.parse(process.argv[2] ?? '{}');
  const result = await paced(options.url, {
    body: (i) => ({
      clientId: `${options.clientIdPrefix}${i % options.clientIds}`,
      name: `Post ${i}`,
      entity: 'post',
      content: options.content,
    }),
    headers: { authorization: `Bearer ${process.env.BENCH_API_KEY}` },
    rate: options.rate,
    durationS: options.durationS,
    connections: options.connections,
  });
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/** Runs paced() in a child process with these options and the API key; resolves with its result. */
async function pacedInChild(options, apiKey) {
  const out = await run(process.execPath, [__filename, JSON.stringify(options)], {
    env: { ...process.env, BENCH_API_KEY: apiKey },
  });
  return JSON.parse(out.trim().split('\n').at(-1) ?? '{}');
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`${err.stack || err.message}\n`);
    process.exit(1);
  });
}

module.exports = { pacedInChild };
