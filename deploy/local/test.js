'use strict';
// `npm test`: installs what is missing, builds, starts throwaway servers, runs every jest project, stops the servers.
// Extra arguments go to jest (e.g. `npm test -- --selectProjects unit`).
const fs = require('node:fs');
const { spawn } = require('node:child_process');
const path = require('node:path');
const { ROOT, say } = require('./util');

/** One plain closing line with the counts, for readers that do not parse jest's own summary. */
function printSummary(resultFile) {
  try {
    const r = JSON.parse(fs.readFileSync(resultFile, 'utf8'));
    process.stdout.write(
      `\njest: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped\n`,
    );
  } catch {
    process.stdout.write('\njest: no result file (the run did not finish)\n');
  }
}

/** Runs the static checks one after another; resolves to the names of those that failed (their output is shown). */
async function runChecks() {
  const { run } = require('./util');
  const bin = (name) => path.join(ROOT, 'node_modules', '.bin', name);
  /** @type {Array<[string, string, string[]]>} */
  const checks = [
    ['type-check', bin('tsc'), ['-p', 'tsconfig.check.json']],
    ['type-check deploy scripts', bin('tsc'), ['-p', 'tsconfig.deploy.json']],
    ['lint', bin('eslint'), ['.']],
    ['format', bin('prettier'), ['--check', '.']],
  ];
  const failed = [];
  for (const [name, command, args] of checks) {
    const t0 = Date.now();
    try {
      await run(command, args, { cwd: ROOT });
      say(`${name} passed in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    } catch (err) {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      failed.push(name);
    }
  }
  return failed;
}

async function main() {
  const { ensureBuild } = require('./ensure');
  await ensureBuild();
  const { startServers, freshDir } = require('./servers');
  const dir = freshDir('test');
  const started = Date.now();
  // Type-check every TypeScript file (tests and deploy/ included), lint the tree with the type-aware rules and check
  // the formatting, while the servers start.
  const checks = runChecks();
  const servers = await startServers({ dir, ephemeral: true });
  const failed = await checks;
  if (failed.length > 0) {
    await servers.stop();
    fs.rmSync(dir, { recursive: true, force: true });
    say(`checks failed: ${failed.join(', ')}`);
    process.exit(1);
  }
  say(
    `servers ready in ${((Date.now() - started) / 1000).toFixed(1)} s: kafka ${servers.kafkaBrokers} (${servers.sources.kafka}), mongo ${servers.mongoUrl} (${servers.sources.mongo})`,
  );
  const resultFile = path.join(dir, 'jest-results.json');
  let code = 1;
  try {
    code = await new Promise((resolve) => {
      const jest = spawn(
        path.join(ROOT, 'node_modules', '.bin', 'jest'),
        [...process.argv.slice(2), '--json', `--outputFile=${resultFile}`],
        {
          cwd: ROOT,
          stdio: 'inherit',
          env: { ...process.env, KAFKA_BROKERS: servers.kafkaBrokers, MONGO_URL: servers.mongoUrl },
        },
      );
      const forward = (signal) => jest.kill(signal);
      process.on('SIGINT', forward);
      process.on('SIGTERM', forward);
      jest.on('close', (status) => resolve(status ?? 1));
    });
    printSummary(resultFile);
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
