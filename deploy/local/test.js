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
 * The jest runs of a plain `npm test`. The unit specs need no servers, so they run while a first run still builds or
 * starts them; the integration tests follow. Each run takes two files at a time: on a 2-core machine the integration
 * files mostly wait on servers and timers, and the unit run's second worker uses the second core. Each test file
 * keeps to its own databases, topics and groups (`uniqueName`), so files side by side on the shared servers do not
 * meet.
 */
const SUITES = [
  { name: 'unit', args: ['--selectProjects', 'unit', '--maxWorkers=2'], needsServers: false },
  { name: 'integration', args: ['--selectProjects', 'integration', '--maxWorkers=2'], needsServers: true },
];

function readResults(resultFile) {
  try {
    return JSON.parse(fs.readFileSync(resultFile, 'utf8'));
  } catch {
    return null;
  }
}

/**
 * The phases' times, then the test files' own times summed per jest project (files run side by side, so these sums
 * exceed the runs' wall times).
 */
function printPhases(resultFiles) {
  const perProject = new Map();
  for (const r of resultFiles.map(readResults)) {
    for (const file of r?.testResults ?? []) {
      const project = file.name.includes('.int.test.') ? 'integration' : 'unit';
      const seconds = ((file.endTime ?? 0) - (file.startTime ?? 0)) / 1000;
      perProject.set(project, (perProject.get(project) ?? 0) + seconds);
    }
  }
  const rows = [...phases, ...[...perProject].map(([name, seconds]) => [`${name} files (summed)`, seconds])];
  process.stdout.write(`\nphases: ${rows.map(([name, seconds]) => `${name} ${seconds.toFixed(0)} s`).join(', ')}\n`);
}

/** One plain closing line with the counts of every run, for readers that do not parse jest's own summary. */
function printSummary(resultFiles) {
  const results = resultFiles.map(readResults);
  if (results.some((r) => r === null)) {
    process.stdout.write('\njest: no result file (a run did not finish)\n');
    return;
  }
  const sum = (count) => results.reduce((total, r) => total + count(r), 0);
  const passed = sum((r) => r.numPassedTests);
  const failed = sum((r) => r.numFailedTests);
  const skipped = sum((r) => r.numPendingTests + r.numTodoTests);
  process.stdout.write(`\njest: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
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

/** The child jest of the moment, to which Ctrl-C and SIGTERM are forwarded. */
let currentJest = null;
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => currentJest?.kill(signal));

/** Runs jest with `args`, its results into `resultFile`; resolves to its exit code. */
function runJest(args, resultFile, env) {
  return new Promise((resolve) => {
    const jest = spawn(
      path.join(ROOT, 'node_modules', '.bin', 'jest'),
      [...args, '--json', `--outputFile=${resultFile}`],
      { cwd: ROOT, stdio: 'inherit', env },
    );
    currentJest = jest;
    jest.on('close', (status) => {
      currentJest = null;
      resolve(status ?? 1);
    });
  });
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
  const serversStarting = timed('servers', async () => {
    const failure = await binaries;
    if (failure) throw failure;
    return startServers({ dir, ephemeral: true });
  }).then(
    (servers) => {
      say(
        `servers ready in ${((Date.now() - started) / 1000).toFixed(1)} s: kafka ${servers.kafkaBrokers} (${servers.sources.kafka}), mongo ${servers.mongoUrl} (${servers.sources.mongo})`,
      );
      return { servers, error: null };
    },
    (error) => ({ servers: null, error }),
  );
  const failed = await checks;
  if (failed.length > 0) {
    const { servers } = await serversStarting;
    await servers?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
    say(`checks failed: ${failed.join(', ')}`);
    process.exit(1);
  }
  // Extra arguments make one run of them, with the servers; without, the suites above in turn.
  const extra = process.argv.slice(2);
  const suites = extra.length > 0 ? [{ name: 'jest', args: extra, needsServers: true }] : SUITES;
  const resultFiles = [];
  let servers = null;
  let code = 0;
  try {
    for (const suite of suites) {
      if (suite.needsServers && !servers) {
        const outcome = await serversStarting;
        if (outcome.error) throw outcome.error;
        servers = outcome.servers;
      }
      const resultFile = path.join(dir, `jest-${suite.name}.json`);
      resultFiles.push(resultFile);
      const env = servers
        ? { ...process.env, KAFKA_BROKERS: servers.kafkaBrokers, MONGO_URL: servers.mongoUrl }
        : process.env;
      const status = await timed(suite.name, () => runJest(suite.args, resultFile, env));
      if (status !== 0) code = status;
    }
    printPhases(resultFiles);
    printSummary(resultFiles);
  } finally {
    await (servers ?? (await serversStarting).servers)?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  process.exit(code);
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err.message}\n`);
  process.exit(1);
});
