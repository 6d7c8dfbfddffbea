'use strict';
// A MongoDB-wire server as local processes: `mongod` when one is on PATH, else FerretDB v1 on PostgreSQL (FerretDB
// built from the launcher in ./ferretdb, PostgreSQL from ./postgres.js, with the GIN indexes that let FerretDB's
// pushed-down filters use an index).
const fs = require('node:fs');
const path = require('node:path');
const { CACHE_DIR, say, freePort, canConnect, childListens, run, onPath, stopProcess, startServer } = require('./util');
const { ensurePostgres, startPostgres } = require('./postgres');

/** The local FerretDB's garbage collector target (Go's GOGC), unless GOGC is set. */
const FERRETDB_GOGC = 400;

const FERRETDB_VERSION = 'v1.24.0';
const LAUNCHER_SRC = path.join(__dirname, 'ferretdb');
/** Named for its one backend, so that a checkout that still builds every backend keeps its own binary. */
const LAUNCHER_BIN = path.join(CACHE_DIR, `ferretdb-${FERRETDB_VERSION}`, 'ferretdb-launcher-postgresql');

/**
 * Only the PostgreSQL backend is built: FerretDB's `ferretdb_no_sqlite` tag leaves out its SQLite backend, whose
 * pure-Go SQLite (modernc.org/sqlite and libc, 350 MB of modules) took a sixth of the compile CPU time and most of the
 * download on a first run.
 */
const GO_BUILD_ARGS = ['build', '-trimpath', '-tags', 'ferretdb_no_sqlite', '-o', LAUNCHER_BIN, '.'];

function launcherFingerprint() {
  const sources = ['main.go', 'go.mod', 'go.sum'].map((f) => fs.readFileSync(path.join(LAUNCHER_SRC, f), 'utf8'));
  return [...sources, GO_BUILD_ARGS.join(' ')].join('\n');
}

async function ensureFerretDB() {
  const mark = `${LAUNCHER_BIN}.source`;
  if (fs.existsSync(LAUNCHER_BIN) && fs.existsSync(mark) && fs.readFileSync(mark, 'utf8') === launcherFingerprint()) {
    return LAUNCHER_BIN;
  }
  say(
    `building FerretDB ${FERRETDB_VERSION} with Go into ${path.dirname(LAUNCHER_BIN)} (first run only, about a minute)`,
  );
  fs.mkdirSync(path.dirname(LAUNCHER_BIN), { recursive: true });
  const started = Date.now();
  await run('go', GO_BUILD_ARGS, {
    cwd: LAUNCHER_SRC,
    env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=mod -buildvcs=false' },
  });
  fs.writeFileSync(mark, launcherFingerprint());
  say(`FerretDB built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return LAUNCHER_BIN;
}

/** Which server `startMongo` runs: `mongod` or `ferretdb`. `VIGIL_MONGO_SERVER` overrides the choice. */
function mongoKind() {
  const wanted = process.env.VIGIL_MONGO_SERVER;
  if (wanted === 'mongod' || wanted === 'ferretdb') return wanted;
  return onPath('mongod') ? 'mongod' : 'ferretdb';
}

async function ensureMongo() {
  if (mongoKind() === 'ferretdb') await Promise.all([ensureFerretDB(), ensurePostgres()]);
}

/**
 * Starts the server with its data in `dir`. `ephemeral`: throwaway data, removed on stop. `durable: false`:
 * PostgreSQL skips fsync (tests). `pgSettings`: extra PostgreSQL settings. `kind` overrides the choice of server. Returns `{ url, kind, stop() }`; stop() stops everything started,
 * and a failed start stops what it had started.
 */
/** @param {{ dir: string; port?: number; ephemeral?: boolean; durable?: boolean; pgSettings?: Record<string, string>; kind?: string; detached?: boolean }} options */
async function startMongo({
  dir,
  port,
  ephemeral = false,
  durable = true,
  pgSettings,
  kind = mongoKind(),
  detached = false,
}) {
  fs.mkdirSync(path.join(dir, 'data'), { recursive: true });
  let postgres = null;
  if (kind === 'ferretdb') postgres = await startPostgres({ dir, ephemeral, durable, settings: pgSettings, detached });
  try {
    return await startWire({ dir, port, kind, postgres, detached });
  } catch (err) {
    if (postgres) await postgres.stop();
    throw err;
  }
}

async function startWire({ dir, port, kind, postgres, detached }) {
  const portFile = path.join(dir, 'port.json');
  if (!port && fs.existsSync(portFile)) {
    ({ port } = JSON.parse(fs.readFileSync(portFile, 'utf8')));
    // A kept port another process holds now (another stack, a leftover) is given up for a free one.
    if (await canConnect(port)) port = undefined;
  }
  port = port || (await freePort());
  fs.writeFileSync(portFile, JSON.stringify({ port }));
  let command;
  let args;
  if (kind === 'mongod') {
    command = 'mongod';
    args = ['--bind_ip', '127.0.0.1', '--port', String(port), '--dbpath', path.join(dir, 'data'), '--quiet'];
  } else {
    command = await ensureFerretDB();
    args = ['-listen', `127.0.0.1:${port}`, '-postgresql-url', postgres.url, '-log-level', 'error'];
  }
  const started = Date.now();
  // FerretDB decodes every document it reads into Go values, so its garbage collector runs often at Go's default
  // GOGC of 100: at 400 it used about a fifth less CPU per ingested record, for a peak of about 80 MB resident.
  const env = kind === 'mongod' ? process.env : { ...process.env, GOGC: process.env.GOGC ?? String(FERRETDB_GOGC) };
  const child = await startServer(command, args, {
    name: kind,
    port,
    logFile: path.join(dir, 'server.log'),
    detached,
    env,
    timeoutMs: 60000,
    ready: (started) => childListens(started, port),
  });
  say(`${kind} listening on 127.0.0.1:${port} (started in ${((Date.now() - started) / 1000).toFixed(1)} s)`);
  return {
    url: `mongodb://127.0.0.1:${port}/`,
    kind,
    port,
    pid: child.pid,
    process: child,
    postgres,
    stop: async () => {
      await stopProcess(child, 10000);
      if (postgres) await postgres.stop();
    },
  };
}

module.exports = { FERRETDB_VERSION, ensureMongo, ensureFerretDB, startMongo, mongoKind };
