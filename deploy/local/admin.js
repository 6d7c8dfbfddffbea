'use strict';
// `npm run admin` / `npm run moderator-admin`: the service's admin CLI. Without MONGO_URL in the environment, it uses
// the store (and broker) of the `npm run up` running from this checkout, which notes them in `.vigil/run.json`.
// Usage: node deploy/local/admin.js gateway|moderator <command…>
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { ROOT } = require('./util');

/** Where a running `npm run up` notes its servers (removed when it stops). */
const RUN_FILE = path.join(ROOT, '.vigil', 'run.json');

/**
 * The environment for the CLI: the caller's, completed from the running stack's note when MONGO_URL is not set.
 * @param {NodeJS.ProcessEnv} env
 * @param {string} runFile
 * @returns {NodeJS.ProcessEnv}
 */
function adminEnv(env = process.env, runFile = RUN_FILE) {
  if (env.MONGO_URL) return env;
  let run;
  try {
    run = JSON.parse(fs.readFileSync(runFile, 'utf8'));
  } catch {
    return env;
  }
  let alive = false;
  try {
    process.kill(run.pid, 0);
    alive = true;
  } catch {
    // The stack that wrote it is gone.
  }
  if (!alive) return env;
  return {
    ...env,
    MONGO_URL: run.mongoUrl,
    ...(run.mongoDb && !env.MONGO_DB ? { MONGO_DB: run.mongoDb } : {}),
    ...(run.kafkaBrokers && !env.KAFKA_BROKERS ? { KAFKA_BROKERS: run.kafkaBrokers } : {}),
  };
}

function main() {
  const [service, ...args] = process.argv.slice(2);
  if (service !== 'gateway' && service !== 'moderator') {
    process.stderr.write('usage: node deploy/local/admin.js gateway|moderator <command…>\n');
    process.exit(2);
  }
  const cli = path.join(ROOT, service, 'dist', 'admin', 'cli.js');
  const result = spawnSync(process.execPath, [cli, ...args], { stdio: 'inherit', env: adminEnv() });
  process.exit(result.status ?? 1);
}

if (require.main === module) main();

module.exports = { RUN_FILE, adminEnv };
