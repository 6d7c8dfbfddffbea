'use strict';
// A MongoDB-wire server as a local process: `mongod` when one is on PATH, else FerretDB v1 (SQLite backend) built
// from the launcher in ./ferretdb.
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { CACHE_DIR, say, freePort, canConnect, waitUntil, run, onPath, stopProcess } = require('./util');

const FERRETDB_VERSION = 'v1.24.0';
const LAUNCHER_SRC = path.join(__dirname, 'ferretdb');
const LAUNCHER_BIN = path.join(CACHE_DIR, `ferretdb-${FERRETDB_VERSION}`, 'ferretdb-launcher');

function launcherFingerprint() {
  return ['main.go', 'go.mod', 'go.sum'].map((f) => fs.readFileSync(path.join(LAUNCHER_SRC, f), 'utf8')).join('\n');
}

async function ensureFerretDB() {
  const mark = `${LAUNCHER_BIN}.source`;
  if (fs.existsSync(LAUNCHER_BIN) && fs.existsSync(mark) && fs.readFileSync(mark, 'utf8') === launcherFingerprint()) {
    return LAUNCHER_BIN;
  }
  say(
    `building FerretDB ${FERRETDB_VERSION} (SQLite backend) with Go into ${path.dirname(LAUNCHER_BIN)} (first run only, about a minute)`,
  );
  fs.mkdirSync(path.dirname(LAUNCHER_BIN), { recursive: true });
  const started = Date.now();
  await run('go', ['build', '-trimpath', '-o', LAUNCHER_BIN, '.'], {
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
  if (mongoKind() === 'ferretdb') await ensureFerretDB();
}

/** Starts the server with its data in `dir`. Returns `{ url, kind, stop() }`. */
async function startMongo({ dir, port } = {}) {
  const kind = mongoKind();
  fs.mkdirSync(path.join(dir, 'data'), { recursive: true });
  const portFile = path.join(dir, 'port.json');
  if (!port && fs.existsSync(portFile)) ({ port } = JSON.parse(fs.readFileSync(portFile, 'utf8')));
  port = port || (await freePort());
  fs.writeFileSync(portFile, JSON.stringify({ port }));
  let command;
  let args;
  if (kind === 'mongod') {
    command = 'mongod';
    args = ['--bind_ip', '127.0.0.1', '--port', String(port), '--dbpath', path.join(dir, 'data'), '--quiet'];
  } else {
    command = await ensureFerretDB();
    args = ['-listen', `127.0.0.1:${port}`, '-data', path.join(dir, 'data'), '-log-level', 'error'];
  }
  const started = Date.now();
  const out = fs.openSync(path.join(dir, 'server.log'), 'a');
  const child = spawn(command, args, { stdio: ['ignore', out, out] });
  fs.closeSync(out);
  let exited = false;
  child.once('exit', () => (exited = true));
  await waitUntil(
    async () => {
      if (exited) throw new Error(`${kind} exited during start; see ${path.join(dir, 'server.log')}`);
      return canConnect(port);
    },
    { timeoutMs: 60000, what: `${kind} on port ${port}` },
  );
  say(`${kind} listening on 127.0.0.1:${port} (started in ${((Date.now() - started) / 1000).toFixed(1)} s)`);
  return {
    url: `mongodb://127.0.0.1:${port}/`,
    kind,
    port,
    pid: child.pid,
    process: child,
    stop: () => stopProcess(child, 10000),
  };
}

module.exports = { FERRETDB_VERSION, ensureMongo, ensureFerretDB, startMongo, mongoKind };
