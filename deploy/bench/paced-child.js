'use strict';
// A steady load (paced.js) in a process of its own, so that the benchmark's other work (a load beside it, a local
// image server) cannot delay the timers and sockets that time it. Usage: BENCH_API_KEY=<key> node paced-child.js
// '<json: { url, rate, durationS, connections, clientIdPrefix, clientIds, content }>'; request i posts the record
// `<clientIdPrefix><i % clientIds>` with `content`. Prints one line of JSON: paced()'s result.
const { execFile } = require('node:child_process');
const { paced } = require('./paced');

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

/**
 * Runs paced() in a child process with these options and the API key; resolves with its result. Its standard output
 * is read whole and apart from its standard error: the result carries every request's latency, longer than the tail
 * of the output that `run` keeps at a higher rate.
 */
function pacedInChild(options, apiKey) {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [__filename, JSON.stringify(options)],
      { env: { ...process.env, BENCH_API_KEY: apiKey }, maxBuffer: 512 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`paced load failed: ${err.message}\n${String(stderr).slice(-4000)}`));
        else resolve(JSON.parse(String(stdout).trim().split('\n').at(-1) ?? '{}'));
      },
    );
  });
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`${err.stack || err.message}\n`);
    process.exit(1);
  });
}

module.exports = { pacedInChild };
