'use strict';
// `npm test`: installs what is missing, builds, starts throwaway servers, runs every jest project, stops the servers.
// Extra arguments go to jest (e.g. `npm test -- --selectProjects unit`).
const fs = require('node:fs');
const { spawn } = require('node:child_process');
const path = require('node:path');
const { ROOT, say } = require('./util');

async function main() {
  const { ensureBuild } = require('./ensure');
  await ensureBuild();
  const { startServers, freshDir } = require('./servers');
  const dir = freshDir('test');
  const started = Date.now();
  const servers = await startServers({ dir });
  say(`servers ready in ${((Date.now() - started) / 1000).toFixed(1)} s: kafka ${servers.kafkaBrokers} (${servers.sources.kafka}), mongo ${servers.mongoUrl} (${servers.sources.mongo})`);
  let code = 1;
  try {
    code = await new Promise((resolve) => {
      const jest = spawn(path.join(ROOT, 'node_modules', '.bin', 'jest'), process.argv.slice(2), {
        cwd: ROOT,
        stdio: 'inherit',
        env: { ...process.env, KAFKA_BROKERS: servers.kafkaBrokers, MONGO_URL: servers.mongoUrl },
      });
      const forward = (signal) => jest.kill(signal);
      process.on('SIGINT', forward);
      process.on('SIGTERM', forward);
      jest.on('close', (status) => resolve(status ?? 1));
    });
  } finally {
    await servers.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  process.exit(code);
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err.message}\n`);
  process.exit(1);
});
