'use strict';
// `npm run up`: installs what is missing, starts Kafka and the MongoDB-wire server (data kept under .vigil/), the
// moderator, notifier and gateway, creates a demo tenant with an API key, and prints where everything listens.
// Ctrl-C stops everything. KAFKA_BROKERS / MONGO_URL point it at existing servers instead. Every port binds 127.0.0.1
// (HTTP_HOST=0.0.0.0 opens the API to the network); the moderator takes only calls with this run's random token.
// `npm run up -- --reset` removes everything a previous run kept (.vigil/, the PostgreSQL cluster included) first.
// A service port already taken stops it before anything starts; a service is ready only when the process this run
// started answers on its port (not another stack's on the same port).
// `--replicas N` starts N gateways, moderators and notifiers against the same Kafka and store, the gateways behind one
// round-robin port; `--brokers 3` runs Kafka as a three-node cluster (replication factor 3, min.insync.replicas 2).
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { ROOT, say, waitUntil, run, stopProcess, canConnect, childListens } = require('./util');
const { serviceArgs } = require('./service-command');
const { checkSecretsMatchData } = require('./local-secrets');

const envPort = (name, fallback) => Number(process.env[name] || fallback);
const BASE_PORTS = {
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
const MAX_REPLICAS = 9;
const MAX_BROKERS = 5;

/**
 * Replica `k`'s ports (0-based): replica 0 has the usual ones, replica k the usual ones + 100·k. With several
 * replicas HTTP_PORT is the round-robin proxy's, and gateway k listens on HTTP_PORT + 1 + k.
 * @param {number} k
 * @param {number} replicas
 * @returns {typeof BASE_PORTS}
 */
function portsOf(k, replicas) {
  return {
    gatewayHttp: replicas > 1 ? BASE_PORTS.gatewayHttp + 1 + k : BASE_PORTS.gatewayHttp,
    gatewayAdmin: BASE_PORTS.gatewayAdmin + 100 * k,
    moderatorGrpc: BASE_PORTS.moderatorGrpc + 100 * k,
    moderatorAdmin: BASE_PORTS.moderatorAdmin + 100 * k,
    notifierAdmin: BASE_PORTS.notifierAdmin + 100 * k,
  };
}

/** `moderator` with one replica (logs as before), `moderator-2` for the second of several. */
const replicaName = (service, k, replicas) => (replicas > 1 ? `${service}-${k + 1}` : service);

const { StartError } = require('./local-secrets');

/** Refuses to start while any service port is taken: another stack still running, or another program. */
async function checkPortsFree(replicas) {
  /** @type {Array<[number, string]>} */
  const wanted = [];
  if (replicas > 1) wanted.push([BASE_PORTS.gatewayHttp, "the gateways' round-robin proxy (HTTP_PORT)"]);
  for (let k = 0; k < replicas; k += 1) {
    for (const [key, port] of Object.entries(portsOf(k, replicas))) {
      const name =
        replicas > 1
          ? `${PORT_NAMES[key]} + ${key === 'gatewayHttp' ? 1 + k : 100 * k}, replica ${k + 1}`
          : PORT_NAMES[key];
      wanted.push([port, name]);
    }
  }
  for (const [port, name] of wanted) {
    if (await canConnect(port)) {
      throw new StartError(
        `port ${port} (${name}) is already in use: is another Vigil still running (npm run up elsewhere)? ` +
          'Stop it, or choose other ports; nothing was started.',
      );
    }
  }
}

/** @typedef {import('node:child_process').ChildProcess & { serviceName: string }} ServiceChild */

/**
 * @param {string} service `gateway`, `moderator` or `notifier`
 * @param {string} name the replica's name (its log file's)
 * @param {Record<string, string | undefined>} env
 * @param {string} logDir
 * @returns {ServiceChild}
 */
function startService(service, name, env, logDir) {
  const log = fs.openSync(path.join(logDir, `${name}.log`), 'a');
  const child = spawn(process.execPath, serviceArgs(ROOT, service), {
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

/**
 * Starts `replicas` of each of the three services and waits for each to be ready; throws if one exits or never gets
 * ready. Gateway k calls the moderators in turn from moderator k on (gRPC pick-first over the list: each gateway keeps
 * to one moderator, and moves to the next when it stops answering).
 */
async function startServices({ common, grpcToken, children, dataDir, logDir, replicas, publicUrl }) {
  const moderatorPorts = Array.from({ length: replicas }, (_, k) => portsOf(k, replicas).moderatorGrpc);
  /** @type {Array<[ServiceChild, number[]]>} */
  const waits = [];
  for (let k = 0; k < replicas; k += 1) {
    const ports = portsOf(k, replicas);
    const moderator = startService(
      'moderator',
      replicaName('moderator', k, replicas),
      {
        ...common,
        GRPC_HOST: '127.0.0.1',
        GRPC_PORT: ports.moderatorGrpc,
        ADMIN_PORT: ports.moderatorAdmin,
        MODERATOR_GRPC_TOKEN: grpcToken,
        // A local run judges images with the bundled model, and may fetch them from this machine, as webhooks go.
        IMAGE_THREADS: process.env.IMAGE_THREADS || '1',
        IMAGE_ALLOWED_CIDRS: process.env.IMAGE_ALLOWED_CIDRS || '127.0.0.0/8,::1/128',
      },
      logDir,
    );
    children.push(moderator);
    waits.push([moderator, [ports.moderatorAdmin, ports.moderatorGrpc]]);
  }
  for (let k = 0; k < replicas; k += 1) {
    const ports = portsOf(k, replicas);
    const notifier = startService(
      'notifier',
      replicaName('notifier', k, replicas),
      {
        ...common,
        ADMIN_PORT: ports.notifierAdmin,
        // The gateway's appeal secret and address, so that the Suspended and Banned emails carry a working appeal link.
        GATEWAY_PUBLIC_URL: publicUrl,
        APPEAL_TOKEN_SECRET: appealSecret(dataDir),
      },
      logDir,
    );
    children.push(notifier);
    waits.push([notifier, [ports.notifierAdmin]]);
  }
  for (let k = 0; k < replicas; k += 1) {
    const ports = portsOf(k, replicas);
    const preferred = [...moderatorPorts.slice(k), ...moderatorPorts.slice(0, k)];
    const gateway = startService(
      'gateway',
      replicaName('gateway', k, replicas),
      {
        ...common,
        HTTP_HOST: process.env.HTTP_HOST || '127.0.0.1',
        HTTP_PORT: ports.gatewayHttp,
        ADMIN_PORT: ports.gatewayAdmin,
        MODERATOR_ADDRESS:
          replicas > 1
            ? `ipv4:${preferred.map((port) => `127.0.0.1:${port}`).join(',')}`
            : `127.0.0.1:${ports.moderatorGrpc}`,
        MODERATOR_GRPC_TOKEN: grpcToken,
        PUBLIC_URL: publicUrl,
        APPEAL_TOKEN_SECRET: appealSecret(dataDir),
      },
      logDir,
    );
    children.push(gateway);
    waits.push([gateway, [ports.gatewayAdmin, ports.gatewayHttp]]);
  }
  for (const [child, ports] of waits) {
    const name = child.serviceName;
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

/**
 * The command line: `--reset`, `--replicas N`, `--brokers N` (also `--replicas=N`). Throws a StartError naming what
 * is wrong.
 * @param {string[]} args
 */
function parseArgs(args) {
  const usage = 'usage: npm run up [-- [--reset] [--replicas N] [--brokers N]]';
  const options = { reset: false, replicas: 1, brokers: 1 };
  for (let i = 0; i < args.length; i += 1) {
    const arg = String(args[i]);
    if (arg === '--reset') {
      options.reset = true;
      continue;
    }
    const match = /^--(replicas|brokers)(?:=(.*))?$/.exec(arg);
    if (!match) throw new StartError(`unknown argument ${arg}; ${usage}`);
    const name = /** @type {'replicas' | 'brokers'} */ (match[1]);
    const raw = match[2] ?? args[++i];
    const max = name === 'replicas' ? MAX_REPLICAS : MAX_BROKERS;
    if (raw === undefined || !/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > max) {
      throw new StartError(
        `--${name} takes a whole number from 1 to ${max}, not ${raw === undefined ? 'nothing' : JSON.stringify(raw)}; ${usage}`,
      );
    }
    options[name] = Number(raw);
  }
  if (options.brokers === 2) {
    throw new StartError(
      '--brokers 2 cannot lose a node (a KRaft quorum of two needs both); use 3, which keeps working with one ' +
        `down; ${usage}`,
    );
  }
  if (options.brokers > 1 && process.env.KAFKA_BROKERS) {
    throw new StartError(
      `--brokers ${options.brokers} starts a local Kafka cluster, but KAFKA_BROKERS is set: unset one`,
    );
  }
  return options;
}

/** `--reset`: removes what earlier runs kept, the PostgreSQL cluster included wherever it lives. */
function reset(dataDir) {
  const { removeCluster } = require('./postgres');
  removeCluster(path.join(dataDir, 'servers', 'mongo'));
  fs.rmSync(dataDir, { recursive: true, force: true });
  say(`removed ${dataDir} and its PostgreSQL cluster: starting afresh`);
}

async function main() {
  const { reset: resetFirst, replicas, brokers } = parseArgs(process.argv.slice(2));
  await checkPortsFree(replicas);
  const dataDir = path.join(ROOT, '.vigil');
  if (resetFirst) reset(dataDir);
  const { ensureBuild } = require('./ensure');
  await ensureBuild();
  const { startServers } = require('./servers');
  const logDir = path.join(dataDir, 'logs');
  fs.mkdirSync(logDir, { recursive: true });
  const servers = await startServers({ dir: path.join(dataDir, 'servers'), detached: true, kafkaNodes: brokers });
  if (brokers > 1) {
    // Created before the services, with a replica on every node (they would take the brokers' default too).
    try {
      const { ensureTopics } = require('./topics');
      await ensureTopics({ brokers: servers.kafkaBrokers, partitions: 6, replicationFactor: brokers });
    } catch (err) {
      await servers.stop();
      throw err;
    }
  }
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
  /** @type {{ port: number; close: () => Promise<void> } | undefined} */
  let proxy;
  const { RUN_FILE } = require('./admin');
  const stopAll = async () => {
    say('stopping services and servers');
    fs.rmSync(RUN_FILE, { force: true });
    await proxy?.close();
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

  const publicUrl = `http://127.0.0.1:${BASE_PORTS.gatewayHttp}`;
  try {
    await startServices({ common, grpcToken, children, dataDir, logDir, replicas, publicUrl });
    if (replicas > 1) {
      const { startRoundRobinProxy } = require('./round-robin-proxy');
      proxy = await startRoundRobinProxy({
        port: BASE_PORTS.gatewayHttp,
        host: process.env.HTTP_HOST || '127.0.0.1',
        backends: Array.from({ length: replicas }, (_, k) => portsOf(k, replicas).gatewayHttp),
      });
      say(`gateways behind 127.0.0.1:${proxy.port} (round robin)`);
    }
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

  const PORTS = BASE_PORTS;
  const replicaLines = [];
  if (replicas > 1) {
    replicaLines.push(
      `  replicas            ${replicas} of each service; the API port above takes turns among the gateways`,
    );
    for (let k = 0; k < replicas; k += 1) {
      const ports = portsOf(k, replicas);
      replicaLines.push(
        `    #${k + 1}  gateway http://127.0.0.1:${ports.gatewayHttp} admin :${ports.gatewayAdmin}   ` +
          `moderator gRPC :${ports.moderatorGrpc} admin :${ports.moderatorAdmin}   notifier admin :${ports.notifierAdmin}`,
      );
    }
  }
  process.stdout.write(
    [
      '',
      'Vigil is up.',
      `  console             http://127.0.0.1:${PORTS.gatewayHttp}/console   sign in as ${member || '(no demo member; see npm run admin -- member create)'}`,
      `  API (gateway)       http://127.0.0.1:${PORTS.gatewayHttp}/api/v1   OpenAPI: http://127.0.0.1:${PORTS.gatewayHttp}/openapi.json`,
      ...(replicas > 1
        ? replicaLines
        : [
            `  moderator (gRPC)    127.0.0.1:${PORTS.moderatorGrpc}  (token-protected; the gateway holds this run's token)`,
            `  admin ports         gateway :${PORTS.gatewayAdmin}  moderator :${PORTS.moderatorAdmin}  notifier :${PORTS.notifierAdmin}  (/livez /readyz /metrics)`,
          ]),
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
