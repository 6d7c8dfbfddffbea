'use strict';
// Starts what a benchmark needs as separate processes: servers (see deploy/local/servers.js), services from their
// built dist/, and a tenant with an API key created through the admin CLI.
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { MongoClient } = require('mongodb');
const YAML = require('yaml');
const { ROOT, say, waitUntil, run, stopProcess } = require('../local/util');
const { serviceArgs } = require('../local/service-command');

/**
 * @typedef {import('node:child_process').ChildProcessByStdio<null, import('node:stream').Readable, import('node:stream').Readable>
 *   & { lines: Array<Record<string, any>> }} NodeChild A script's process, with the JSON lines it logged (the last ones).
 */

/**
 * @param {string[]} args
 * @param {Record<string, string>} env
 * @returns {NodeChild}
 */
function spawnNode(args, env) {
  const child = /** @type {NodeChild} */ (
    spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  );
  child.lines = [];
  let rest = '';
  child.stdout.on('data', (chunk) => {
    const parts = (rest + chunk.toString()).split('\n');
    rest = parts.pop() ?? '';
    for (const line of parts) {
      if (!line.startsWith('{')) continue;
      try {
        child.lines.push(JSON.parse(line));
      } catch {
        // not a log line
      }
      if (child.lines.length > 2000) child.lines.splice(0, 1000);
    }
  });
  child.stderr.on('data', () => undefined);
  return child;
}

/** @returns {Promise<number>} */
async function portFrom(child, msg, what) {
  /** @type {number | undefined} */
  let port;
  await waitUntil(
    () => {
      if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}`);
      port = child.lines.find((line) => line.msg === msg)?.port;
      return typeof port === 'number';
    },
    // A fresh store's indexes and a loaded machine can hold a service's start past a minute.
    { timeoutMs: Number(process.env.BENCH_START_TIMEOUT_MS || 180000), what },
  );
  return /** @type {number} */ (port);
}

/** A TCP port free on 127.0.0.1 right now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
}

/** Peak resident set size of a process, in MB (Linux VmHWM). */
function peakRssMb(pid) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1]);
    return Math.round(kb / 1024);
  } catch {
    return NaN;
  }
}

/**
 * The NODE_OPTIONS the Helm chart gives service `name` by default: `--max-old-space-size` of its `maxOldSpaceMB`
 * (deploy/helm/vigil/values.yaml, about 70 % of its memory limit), none when that is 0. The benchmarks run each service
 * so, as a deployment does: without it V8 sizes the old generation from the machine's memory and collects garbage
 * late, so the resident memory measured would be the machine's, not the service's. `BENCH_CHART_HEAP=0` runs them
 * with Node's default instead.
 * @param {string} name
 * @returns {Record<string, string>}
 */
function chartHeapEnv(name) {
  if (process.env.BENCH_CHART_HEAP === '0') return {};
  const values = YAML.parse(fs.readFileSync(path.join(ROOT, 'deploy', 'helm', 'vigil', 'values.yaml'), 'utf8'));
  const mb = Number(values?.services?.[name]?.maxOldSpaceMB ?? 0);
  if (!mb) return {};
  const given = process.env.NODE_OPTIONS ? `${process.env.NODE_OPTIONS} ` : '';
  return { NODE_OPTIONS: `${given}--max-old-space-size=${mb}` };
}

/**
 * `env`: variables for every service, and under `notifier` the notifier's own. `replicas` (default 1) starts that many
 * of each service, named `moderator`, `moderator-2`, …: gateway k calls moderator k first (a pick-first gRPC list),
 * and `ports.gateways` lists every gateway's HTTP port. `restart(name)` SIGKILLs one and starts it again on its ports.
 * @param {{ services: string[]; env?: Record<string, any>; replicas?: number }} options
 */
async function startStack({ services, env = {}, replicas = 1 }) {
  const { ensureBuild } = require('../local/ensure');
  await ensureBuild();
  const { startServers, freshDir } = require('../local/servers');
  const dir = freshDir('bench');
  const servers = await startServers({ dir, ephemeral: true, durable: true });
  const children = [];
  const common = {
    KAFKA_BROKERS: servers.kafkaBrokers,
    MONGO_URL: servers.mongoUrl,
    MONGO_DB: 'vigil_bench',
    LOG_LEVEL: 'warn',
    ADMIN_PORT: '0',
    ADMIN_HOST: '127.0.0.1',
    // The moderator's gRPC token, random per run; the gateway sends it.
    MODERATOR_GRPC_TOKEN: randomBytes(32).toString('hex'),
    ...env,
  };
  const stack = { servers, children, ports: {}, adminPorts: {}, pids: {}, common };
  /** @type {Map<string, { service: string; extra: Record<string, string>; msg: string }>} */
  const started = new Map();
  const replicaName = (service, k) => (k === 0 ? service : `${service}-${k + 1}`);
  stack.stop = async () => {
    await Promise.allSettled(children.reverse().map((child) => stopProcess(child, 20000)));
    await servers.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    // Ports are found from each service's "listening" log line, so services log at info while starting.
    const startOne = async (service, extra, msg, name = service) => {
      const adminPort = stack.adminPorts[name] ?? (await freePort());
      const child = spawnNode(serviceArgs(ROOT, service), {
        ...chartHeapEnv(service),
        ...common,
        LOG_LEVEL: 'info',
        ADMIN_PORT: String(adminPort),
        ...extra,
      });
      children.push(child);
      started.set(name, { service, extra, msg });
      stack.pids[name] = child.pid;
      stack.adminPorts[name] = adminPort;
      stack.processes = { ...stack.processes, [name]: child };
      return portFrom(child, msg, `${name} to listen`);
    };
    /** SIGKILLs replica `name` (if it runs) and starts it again with the same settings and ports; resolves once it listens. */
    stack.restart = async (name) => {
      const spec = started.get(name);
      const child = stack.processes?.[name];
      if (!spec || !child) throw new Error(`no service ${name} in the stack`);
      await stack.kill(name);
      children.splice(children.indexOf(child), 1);
      return startOne(spec.service, spec.extra, spec.msg, name);
    };
    /** Only SIGKILLs replica `name`; `restart(name)` later starts it (once more SIGKILL is a no-op). */
    stack.kill = async (name) => {
      const child = stack.processes?.[name];
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    };
    /** @type {number[]} */
    const moderatorPorts = [];
    if (services.includes('moderator')) {
      for (let k = 0; k < replicas; k += 1) {
        // A fixed port with several replicas, so the gateways' address lists stay right across a restart.
        const grpcPort = replicas > 1 ? String(await freePort()) : '0';
        moderatorPorts.push(
          await startOne(
            'moderator',
            { GRPC_HOST: '127.0.0.1', GRPC_PORT: grpcPort },
            'grpc server listening',
            replicaName('moderator', k),
          ),
        );
      }
      stack.ports.moderator = moderatorPorts[0];
    }
    if (services.includes('notifier')) {
      for (let k = 0; k < replicas; k += 1) {
        await startOne('notifier', env.notifier || {}, 'admin server listening', replicaName('notifier', k));
      }
    }
    if (services.includes('gateway')) {
      stack.ports.gateways = [];
      for (let k = 0; k < replicas; k += 1) {
        const preferred = [...moderatorPorts.slice(k), ...moderatorPorts.slice(0, k)];
        const httpPort = replicas > 1 ? String(await freePort()) : '0';
        stack.ports.gateways.push(
          await startOne(
            'gateway',
            {
              HTTP_HOST: '127.0.0.1',
              HTTP_PORT: httpPort,
              MODERATOR_ADDRESS:
                replicas > 1
                  ? `ipv4:${preferred.map((port) => `127.0.0.1:${port}`).join(',')}`
                  : `127.0.0.1:${stack.ports.moderator}`,
            },
            'http server listening',
            replicaName('gateway', k),
          ),
        );
      }
      stack.ports.gateway = stack.ports.gateways[0];
      const cli = path.join(ROOT, 'gateway', 'dist', 'admin', 'cli.js');
      const adminEnv = { ...process.env, MONGO_URL: servers.mongoUrl, MONGO_DB: 'vigil_bench' };
      /** A new tenant and an API key of it, through the admin CLI. */
      stack.createTenant = async (name) => {
        await run(process.execPath, [cli, 'tenant', 'create', name], { env: adminEnv });
        const out = await run(process.execPath, [cli, 'key', 'create', name], { env: adminEnv });
        const key = (/vgl_[0-9a-f]+/.exec(out) || [])[0];
        if (!key) throw new Error(`admin CLI printed no key: ${out}`);
        return key;
      };
      stack.apiKey = await stack.createTenant(`bench${Date.now()}`);
      const base = `http://127.0.0.1:${stack.ports.gateway}`;
      await waitUntil(
        async () => {
          const res = await fetch(`${base}/api/v1/records?limit=1`, {
            headers: { authorization: `Bearer ${stack.apiKey}` },
          }).catch(() => null);
          return res?.status === 200;
        },
        { timeoutMs: 60000, what: 'gateway to answer' },
      );
    }
  } catch (err) {
    await stack.stop();
    throw err;
  }
  say(
    `stack ready: ${Object.entries(stack.ports)
      .map(([k, v]) => `${k}:${v}`)
      .join(' ')}${replicas > 1 ? ` (${replicas} replicas of each)` : ''}`,
  );
  return stack;
}

/**
 * Starts a stack of `services`, connects to its database and runs `fn` with both; closes the client and stops the
 * stack after.
 * @template T
 * @param {string[]} services
 * @param {(stack: Awaited<ReturnType<typeof startStack>>, db: import('mongodb').Db) => Promise<T>} fn
 * @returns {Promise<T>}
 */
async function withStackDb(services, fn) {
  const stack = await startStack({ services });
  const client = new MongoClient(stack.servers.mongoUrl);
  try {
    await client.connect();
    return await fn(stack, client.db(stack.common.MONGO_DB));
  } finally {
    await client.close();
    await stack.stop();
  }
}

module.exports = { startStack, withStackDb, spawnNode, portFrom, peakRssMb, chartHeapEnv };
