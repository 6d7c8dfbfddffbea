'use strict';
// `npm run up`: installs what is missing, starts Kafka and the MongoDB-wire server (data kept under .vigil/), the
// moderator, notifier and gateway, creates a demo tenant with an API key, and prints where everything listens.
// Ctrl-C stops everything. KAFKA_BROKERS / MONGO_URL point it at existing servers instead. Every port binds 127.0.0.1
// (HTTP_HOST=0.0.0.0 opens the API to the network); the moderator takes only calls with this run's random token.
// `npm run up -- --reset` removes everything a previous run kept (.vigil/, the PostgreSQL cluster included) first.
// A service port already taken stops it before anything starts; a service is ready only when the process this run
// started answers on its port (not another stack's on the same port).
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { ROOT, say, waitUntil, run, stopProcess, canConnect, childListens } = require('./util');
const { serviceArgs } = require('./service-command');
const { checkSecretsMatchData } = require('./local-secrets');

const envPort = (name, fallback) => Number(process.env[name] || fallback);
const PORTS = {
  gatewayHttp: envPort('HTTP_PORT', 8080),
  gatewayAdmin: envPort('VIGIL_GATEWAY_ADMIN_PORT', 9090),
  moderatorGrpc: envPort('VIGIL_MODERATOR_GRPC_PORT', 50051),
  moderatorAdmin: envPort('VIGIL_MODERATOR_ADMIN_PORT', 9091),
  notifierAdmin: envPort('VIGIL_NOTIFIER_ADMIN_PORT', 9092),
};
const PORT_NAMES = {
  gatewayHttp: 'gateway HTTP (HTTP_PORT)',
  gatewayAdmin: 'gateway admin (VIGIL_GATEWAY_ADMIN_PORT)',
  moderatorGrpc: 'moderator gRPC (VIGIL_MODERATOR_GRPC_PORT)',
  moderatorAdmin: 'moderator admin (VIGIL_MODERATOR_ADMIN_PORT)',
  notifierAdmin: 'notifier admin (VIGIL_NOTIFIER_ADMIN_PORT)',
};

const { StartError } = require('./local-secrets');

/** Refuses to start while any service port is taken: another stack still running, or another program. */
async function checkPortsFree() {
  for (const [key, port] of Object.entries(PORTS)) {
    if (await canConnect(port)) {
      throw new StartError(
        `port ${port} (${PORT_NAMES[key]}) is already in use: is another Vigil still running (npm run up elsewhere)? ` +
          'Stop it, or choose other ports; nothing was started.',
      );
    }
  }
}

/** @typedef {import('node:child_process').ChildProcess & { serviceName: string }} ServiceChild */

/**
 * @param {string} name
 * @param {Record<string, string | undefined>} env
 * @param {string} logDir
 * @returns {ServiceChild}
 */
function startService(name, env, logDir) {
  const log = fs.openSync(path.join(logDir, `${name}.log`), 'a');
  const child = spawn(process.execPath, serviceArgs(ROOT, name), {
    env: { ...process.env, ...env },
    stdio: ['ignore', log, log],
    // A process group of its own: a terminal's Ctrl-C reaches only this script, which stops the services one by one
    // with a single SIGTERM (a second signal would cut their graceful shutdown short), then the servers.
    detached: true,
  });
  fs.closeSync(log);
  return Object.assign(child, { serviceName: name });
}

/** Ready: the process this run started answers on its admin port, and answers that it is ready. */
async function ready(child, port) {
  if (!(await childListens(child, port))) return false;
  try {
    const res = await fetch(`http://127.0.0.1:${port}/readyz`);
    return res.status === 200;
  } catch {
    return false;
  }
}

/** Why a service exited: a port it could not bind, named, or where its log is. */
function exitReason(name, child, logDir) {
  const logFile = path.join(logDir, `${name}.log`);
  let log = '';
  try {
    log = fs.readFileSync(logFile, 'utf8').slice(-20000);
  } catch {
    // no log
  }
  const taken = /EADDRINUSE[^\n]*?:(\d+)/.exec(log);
  if (taken) return `${name} could not listen: port ${taken[1]} is already in use (another Vigil still running?)`;
  return `${name} exited with ${child.exitCode}; see ${logFile}`;
}

/** Starts the three services and waits for each to be ready; throws if one exits or never gets ready. */
async function startServices({ common, grpcToken, children, dataDir, logDir }) {
  children.push(
    startService(
      'moderator',
      {
        ...common,
        GRPC_HOST: '127.0.0.1',
        GRPC_PORT: PORTS.moderatorGrpc,
        ADMIN_PORT: PORTS.moderatorAdmin,
        MODERATOR_GRPC_TOKEN: grpcToken,
        // A local run judges images with the bundled model, and may fetch them from this machine, as webhooks go.
        IMAGE_THREADS: process.env.IMAGE_THREADS || '1',
        IMAGE_ALLOWED_CIDRS: process.env.IMAGE_ALLOWED_CIDRS || '127.0.0.0/8,::1/128',
      },
      logDir,
    ),
  );
  children.push(
    startService(
      'notifier',
      {
        ...common,
        ADMIN_PORT: PORTS.notifierAdmin,
        // The gateway's appeal secret and address, so that the Suspended and Banned emails carry a working appeal link.
        GATEWAY_PUBLIC_URL: `http://127.0.0.1:${PORTS.gatewayHttp}`,
        APPEAL_TOKEN_SECRET: appealSecret(dataDir),
      },
      logDir,
    ),
  );
  children.push(
    startService(
      'gateway',
      {
        ...common,
        HTTP_HOST: process.env.HTTP_HOST || '127.0.0.1',
        HTTP_PORT: PORTS.gatewayHttp,
        ADMIN_PORT: PORTS.gatewayAdmin,
        MODERATOR_ADDRESS: `127.0.0.1:${PORTS.moderatorGrpc}`,
        MODERATOR_GRPC_TOKEN: grpcToken,
        PUBLIC_URL: `http://127.0.0.1:${PORTS.gatewayHttp}`,
        APPEAL_TOKEN_SECRET: appealSecret(dataDir),
      },
      logDir,
    ),
  );
  /** @type {Array<[string, number[]]>} */
  const waits = [
    ['moderator', [PORTS.moderatorAdmin, PORTS.moderatorGrpc]],
    ['notifier', [PORTS.notifierAdmin]],
    ['gateway', [PORTS.gatewayAdmin, PORTS.gatewayHttp]],
  ];
  for (const [name, ports] of waits) {
    const child = children.find((c) => c.serviceName === name);
    const [admin, ...others] = ports;
    await waitUntil(
      async () => {
        if (child.exitCode !== null || child.signalCode !== null) throw new StartError(exitReason(name, child, logDir));
        if (!(await ready(child, admin))) return false;
        for (const port of others) if (!(await childListens(child, port))) return false;
        return true;
      },
      { timeoutMs: 60000, what: `${name} readiness (see ${logDir}/${name}.log)` },
    );
    say(`${name} ready`);
  }
}

/** `--reset`: removes what earlier runs kept, the PostgreSQL cluster included wherever it lives. */
function reset(dataDir) {
  const { removeCluster } = require('./postgres');
  removeCluster(path.join(dataDir, 'servers', 'mongo'));
  fs.rmSync(dataDir, { recursive: true, force: true });
  say(`removed ${dataDir} and its PostgreSQL cluster: starting afresh`);
}

async function main() {
  const args = process.argv.slice(2);
  const unknown = args.filter((arg) => arg !== '--reset');
  if (unknown.length > 0) throw new StartError(`unknown argument ${unknown[0]}; usage: npm run up [-- --reset]`);
  await checkPortsFree();
  const dataDir = path.join(ROOT, '.vigil');
  if (args.includes('--reset')) reset(dataDir);
  const { ensureBuild } = require('./ensure');
  await ensureBuild();
  const { startServers } = require('./servers');
  const logDir = path.join(dataDir, 'logs');
  fs.mkdirSync(logDir, { recursive: true });
  const servers = await startServers({ dir: path.join(dataDir, 'servers'), detached: true });
  const common = {
    KAFKA_BROKERS: servers.kafkaBrokers,
    MONGO_URL: servers.mongoUrl,
    LOG_LEVEL: process.env.LOG_LEVEL || 'info',
    // Local receivers (e.g. a webhook test server on this machine) are allowed in a local run only.
    WEBHOOK_ALLOWED_CIDRS: process.env.WEBHOOK_ALLOWED_CIDRS || '127.0.0.0/8,::1/128',
    // Only this machine reaches the admin ports; the moderator's gRPC port too (below).
    ADMIN_HOST: '127.0.0.1',
    // Tenants' Stripe keys stay readable across local runs (the gateway seals them, the notifier opens them).
    SECRETS_ENCRYPTION_KEY: localSecret(path.join(dataDir, 'secrets-encryption-key.txt')),
  };
  try {
    await checkSecretsMatchData(servers.mongoUrl, process.env.MONGO_DB || 'vigil', [
      common.SECRETS_ENCRYPTION_KEY,
      appealSecret(dataDir),
    ]);
  } catch (err) {
    await servers.stop();
    throw err;
  }
  // A fresh token per run, known only to the moderator and the gateway started here.
  const grpcToken = randomBytes(32).toString('hex');
  const children = [];
  const { RUN_FILE } = require('./admin');
  const stopAll = async () => {
    say('stopping services and servers');
    fs.rmSync(RUN_FILE, { force: true });
    await Promise.allSettled(children.reverse().map((child) => stopProcess(child, 25000)));
    await servers.stop();
  };
  // One stop, whatever signals follow; should this script end otherwise, its services (in groups of their own) end too.
  let stopping;
  const onSignal = () => (stopping ??= stopAll().then(() => process.exit(0)));
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  });

  try {
    await startServices({ common, grpcToken, children, dataDir, logDir });
  } catch (err) {
    // A service that cannot start (a port still held, a bad setting) leaves nothing else running.
    await stopAll();
    throw err;
  }

  // `npm run admin` finds this run's store here while it runs.
  fs.writeFileSync(
    RUN_FILE,
    JSON.stringify({
      pid: process.pid,
      mongoUrl: servers.mongoUrl,
      mongoDb: process.env.MONGO_DB || undefined,
      kafkaBrokers: servers.kafkaBrokers,
    }) + '\n',
    { mode: 0o600 },
  );
  const cli = path.join(ROOT, 'gateway', 'dist', 'admin', 'cli.js');
  const adminEnv = { ...process.env, MONGO_URL: servers.mongoUrl };
  const keyFile = path.join(dataDir, 'demo-key.txt');
  let key = fs.existsSync(keyFile) ? fs.readFileSync(keyFile, 'utf8').trim() : '';
  if (!key) {
    await run(process.execPath, [cli, 'tenant', 'create', 'demo'], { env: adminEnv }).catch(() => undefined);
    const out = await run(process.execPath, [cli, 'key', 'create', 'demo'], { env: adminEnv });
    key = (out.match(/vgl_[0-9a-f]+/) || [''])[0];
    if (key) fs.writeFileSync(keyFile, key + '\n', { mode: 0o600 });
  }

  // A demo console member, created once; its password is kept next to the key (local runs only).
  const memberFile = path.join(dataDir, 'demo-member.txt');
  let member = fs.existsSync(memberFile) ? fs.readFileSync(memberFile, 'utf8').trim() : '';
  if (!member) {
    const out = await run(process.execPath, [cli, 'member', 'create', 'demo', 'demo@example.com', '--role', 'admin'], {
      env: adminEnv,
    }).catch(() => '');
    const password = (out.match(/"password": "([^"]+)"/) || [])[1];
    if (password) {
      member = `demo@example.com ${password}`;
      fs.writeFileSync(memberFile, member + '\n', { mode: 0o600 });
    }
  }

  process.stdout.write(
    [
      '',
      'Vigil is up.',
      `  console             http://127.0.0.1:${PORTS.gatewayHttp}/console   sign in as ${member || '(no demo member; see npm run admin -- member create)'}`,
      `  API (gateway)       http://127.0.0.1:${PORTS.gatewayHttp}/api/v1   OpenAPI: http://127.0.0.1:${PORTS.gatewayHttp}/openapi.json`,
      `  moderator (gRPC)    127.0.0.1:${PORTS.moderatorGrpc}  (token-protected; the gateway holds this run's token)`,
      `  admin ports         gateway :${PORTS.gatewayAdmin}  moderator :${PORTS.moderatorAdmin}  notifier :${PORTS.notifierAdmin}  (/livez /readyz /metrics)`,
      `  Kafka               ${servers.kafkaBrokers} (${servers.sources.kafka})`,
      `  MongoDB             ${servers.mongoUrl} (${servers.sources.mongo})`,
      `  logs                ${logDir}`,
      `  demo tenant API key ${key || '(could not be created; see the admin CLI: npm run admin -- --help)'}`,
      '',
      'Try:',
      `  curl -s http://127.0.0.1:${PORTS.gatewayHttp}/api/v1/moderate -H "Authorization: Bearer ${key || '<key>'}" \\`,
      `    -H 'Content-Type: application/json' -d '{"clientId":"post-1","name":"Hello","entity":"post","content":"hello world"}'`,
      '',
      'Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );
}

const appealSecret = (dataDir) => localSecret(path.join(dataDir, 'appeal-secret.txt'));

/** A random secret kept in the run's data folder, so links handed out stay valid across restarts. */
function localSecret(file) {
  if (!fs.existsSync(file))
    fs.writeFileSync(file, crypto.randomBytes(32).toString('base64url') + '\n', { mode: 0o600 });
  return fs.readFileSync(file, 'utf8').trim();
}

main().catch((err) => {
  process.stderr.write(`${err instanceof StartError ? `[vigil] ${err.message}` : err.stack || err.message}\n`);
  process.exit(1);
});
