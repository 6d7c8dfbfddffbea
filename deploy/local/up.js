'use strict';
// `npm run up`: installs what is missing, starts Kafka and the MongoDB-wire server (data kept under .vigil/), the
// moderator, notifier and gateway, creates a demo tenant with an API key, and prints where everything listens.
// Ctrl-C stops everything. KAFKA_BROKERS / MONGO_URL point it at existing servers instead. Every port binds 127.0.0.1
// (HTTP_HOST=0.0.0.0 opens the API to the network); the moderator takes only calls with this run's random token.
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { ROOT, say, waitUntil, run, stopProcess } = require('./util');
const { serviceArgs } = require('./service-command');

const PORTS = {
  gatewayHttp: Number(process.env.HTTP_PORT || 8080),
  gatewayAdmin: 9090,
  moderatorGrpc: 50051,
  moderatorAdmin: 9091,
  notifierAdmin: 9092,
};

function startService(name, env, logDir) {
  const log = fs.openSync(path.join(logDir, `${name}.log`), 'a');
  const child = spawn(process.execPath, serviceArgs(ROOT, name), {
    env: { ...process.env, ...env },
    stdio: ['ignore', log, log],
  });
  fs.closeSync(log);
  child.serviceName = name;
  return child;
}

async function ready(port) {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/readyz`);
    return res.status === 200;
  } catch {
    return false;
  }
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
  children.push(startService('notifier', { ...common, ADMIN_PORT: PORTS.notifierAdmin }, logDir));
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
        APPEAL_TOKEN_SECRET: localSecret(path.join(dataDir, 'appeal-secret.txt')),
      },
      logDir,
    ),
  );
  for (const [name, port] of [
    ['moderator', PORTS.moderatorAdmin],
    ['notifier', PORTS.notifierAdmin],
    ['gateway', PORTS.gatewayAdmin],
  ]) {
    const child = children.find((c) => c.serviceName === name);
    await waitUntil(
      async () => {
        if (child.exitCode !== null)
          throw new Error(`${name} exited with ${child.exitCode}; see ${logDir}/${name}.log`);
        return ready(port);
      },
      { timeoutMs: 60000, what: `${name} readiness (see ${logDir}/${name}.log)` },
    );
    say(`${name} ready`);
  }
}

async function main() {
  const { ensureBuild } = require('./ensure');
  await ensureBuild();
  const { startServers } = require('./servers');
  const dataDir = path.join(ROOT, '.vigil');
  const logDir = path.join(dataDir, 'logs');
  fs.mkdirSync(logDir, { recursive: true });
  const servers = await startServers({ dir: path.join(dataDir, 'servers') });
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
  // A fresh token per run, known only to the moderator and the gateway started here.
  const grpcToken = randomBytes(32).toString('hex');
  const children = [];
  const stopAll = async () => {
    say('stopping services and servers');
    await Promise.allSettled(children.reverse().map((child) => stopProcess(child, 25000)));
    await servers.stop();
  };
  process.on('SIGINT', () => stopAll().then(() => process.exit(0)));
  process.on('SIGTERM', () => stopAll().then(() => process.exit(0)));

  try {
    await startServices({ common, grpcToken, children, dataDir, logDir });
  } catch (err) {
    // A service that cannot start (a port still held, a bad setting) leaves nothing else running.
    await stopAll();
    throw err;
  }

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

/** A random secret kept in the run's data folder, so links handed out stay valid across restarts. */
function localSecret(file) {
  if (!fs.existsSync(file))
    fs.writeFileSync(file, crypto.randomBytes(32).toString('base64url') + '\n', { mode: 0o600 });
  return fs.readFileSync(file, 'utf8').trim();
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err.message}\n`);
  process.exit(1);
});
