'use strict';
// `npm test`: installs what is missing, builds, starts throwaway servers, runs every jest project, stops the servers.
// Extra arguments go to jest (e.g. `npm test -- --selectProjects unit`).
const fs = require('node:fs');
const { spawn } = require('node:child_process');
const path = require('node:path');
const { ROOT, say } = require('./util');

/** Each phase's time in seconds, printed at the end so that growth is seen. */
const phases = [];
async function timed(name, work) {
  const t0 = Date.now();
  try {
    return await work();
  } finally {
    phases.push([name, (Date.now() - t0) / 1000]);
  }
}

/**
 * The phases' times, then the test files' own times summed per jest project (files run side by side, so these sums
 * exceed the jest phase's wall time).
 */
function printPhases(resultFile) {
  const perProject = new Map();
  try {
    const r = JSON.parse(fs.readFileSync(resultFile, 'utf8'));
    for (const file of r.testResults ?? []) {
      const project = file.name.includes('.int.test.') ? 'integration' : 'unit';
      const seconds = ((file.endTime ?? 0) - (file.startTime ?? 0)) / 1000;
      perProject.set(project, (perProject.get(project) ?? 0) + seconds);
    }
  } catch {
    // No result file: the phases alone.
  }
  const rows = [...phases, ...[...perProject].map(([name, seconds]) => [`${name} files (summed)`, seconds])];
  process.stdout.write(`\nphases: ${rows.map(([name, seconds]) => `${name} ${seconds.toFixed(0)} s`).join(', ')}\n`);
}

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
    // Every workspace but the root (its deploy scripts are read for what they import, not held to it).
    ['unused exports', bin('knip'), ['--workspace', '!vigil', '--include', 'exports,types', '--no-progress']],
    ['format', bin('prettier'), ['--check', '.']],
  ];
  const failed = [];
  for (const [name, command, args] of checks) {
    const t0 = Date.now();
    try {
      await timed(name, () => run(command, args, { cwd: ROOT }));
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
  const { startServers, prepareServerBinaries, freshDir } = require('./servers');
  // A first run fetches the Kafka jars and builds FerretDB (minutes) while npm installs and TypeScript builds.
  const binaries = timed('server binaries (beside install)', () => prepareServerBinaries()).then(
    () => null,
    (err) => err,
  );
  await timed('install and build', () => ensureBuild());
  const dir = freshDir('test');
  const started = Date.now();
  // Type-check every TypeScript file (tests and deploy/ included), lint the tree with the type-aware rules and check
  // the formatting, while the servers start.
  const checks = runChecks();
  const servers = await timed('servers', async () => {
    const failure = await binaries;
    if (failure) throw failure;
    return startServers({ dir, ephemeral: true });
  });
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
    const jestStarted = Date.now();
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
    phases.push(['jest', (Date.now() - jestStarted) / 1000]);
    printPhases(resultFile);
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
