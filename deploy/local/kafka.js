'use strict';
// Apache Kafka as local processes: jars resolved from Maven Central into the cache; a single KRaft node, or a cluster
// of several on this machine (`npm run up -- --brokers 3`, the chaos test).
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const {
  CACHE_DIR,
  say,
  freePort,
  canConnect,
  childListens,
  waitUntil,
  run,
  stopProcess,
  startServer,
} = require('./util');

// 3.9 is the last line that keeps every protocol version kafkajs 2.2.4 speaks (4.0 removed the old ones).
const KAFKA_VERSION = '3.9.1';
const LIB_DIR = path.join(CACHE_DIR, `kafka-${KAFKA_VERSION}`, 'libs');
const READY_MARK = path.join(LIB_DIR, '.complete');

async function ensureKafkaJars() {
  if (fs.existsSync(READY_MARK)) return LIB_DIR;
  say(`resolving Apache Kafka ${KAFKA_VERSION} jars from Maven Central into ${LIB_DIR} (first run only)`);
  fs.rmSync(LIB_DIR, { recursive: true, force: true });
  fs.mkdirSync(LIB_DIR, { recursive: true });
  const started = Date.now();
  await run(
    'mvn',
    [
      '-B',
      '-q',
      '-f',
      path.join(__dirname, 'kafka', 'pom.xml'),
      `-Dkafka.version=${KAFKA_VERSION}`,
      'dependency:copy-dependencies',
      '-DincludeScope=runtime',
      `-DoutputDirectory=${LIB_DIR}`,
    ],
    { echo: false },
  );
  fs.writeFileSync(READY_MARK, new Date().toISOString());
  say(`Kafka jars ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return LIB_DIR;
}

const classpath = () => `${LIB_DIR}/*`;

/**
 * The broker+controller's settings. `node` places it in a cluster: its id, the quorum's voters and the cluster-wide
 * replication settings; without it, a single node whose internal topics have one replica.
 * @param {string} dir
 * @param {number} port
 * @param {number} controllerPort
 * @param {{ id: number; voters: string; replicas: number; minInsync: number }} [node]
 */
function writeConfig(dir, port, controllerPort, node) {
  const cluster = node ?? { id: 1, voters: `1@127.0.0.1:${controllerPort}`, replicas: 1, minInsync: 1 };
  const config = [
    'process.roles=broker,controller',
    `node.id=${cluster.id}`,
    `controller.quorum.voters=${cluster.voters}`,
    `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
    'controller.listener.names=CONTROLLER',
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'inter.broker.listener.name=PLAINTEXT',
    `log.dirs=${path.join(dir, 'data')}`,
    'num.partitions=3',
    'auto.create.topics.enable=true',
    `offsets.topic.replication.factor=${cluster.replicas}`,
    'offsets.topic.num.partitions=3',
    `transaction.state.log.replication.factor=${cluster.replicas}`,
    `transaction.state.log.min.isr=${cluster.minInsync}`,
    'group.initial.rebalance.delay.ms=0',
    'log.flush.interval.messages=9223372036854775807',
    'metadata.max.idle.interval.ms=5000',
  ];
  if (node) {
    config.push(
      // Topics the services create (kafkajs asks for replication factor -1) get every node as a replica, and an
      // acks=all write needs two of them: one node may die without losing or refusing an acknowledged write.
      `default.replication.factor=${node.replicas}`,
      `min.insync.replicas=${node.minInsync}`,
      'unclean.leader.election.enable=false',
      // A killed node is fenced (and its partitions get new leaders) after 6 s without a heartbeat instead of 9 s.
      'broker.heartbeat.interval.ms=1000',
      'broker.session.timeout.ms=6000',
    );
  }
  const file = path.join(dir, 'server.properties');
  fs.writeFileSync(file, config.join('\n') + '\n');
  fs.writeFileSync(
    path.join(dir, 'log4j.properties'),
    [
      'log4j.rootLogger=WARN, file',
      'log4j.appender.file=org.apache.log4j.FileAppender',
      `log4j.appender.file.File=${path.join(dir, 'kafka.log')}`,
      'log4j.appender.file.layout=org.apache.log4j.PatternLayout',
      'log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n',
    ].join('\n') + '\n',
  );
  return file;
}

/** The JVM's options: a fixed heap of `heapMb`, logging into `dir`. */
function javaOptions(dir, heapMb) {
  return [
    '-Xms' + heapMb + 'm',
    '-Xmx' + heapMb + 'm',
    '-XX:+UseG1GC',
    '-Djava.awt.headless=true',
    `-Dlog4j.configuration=file:${path.join(dir, 'log4j.properties')}`,
  ];
}

/** A new cluster id. A base64url id may start with '-', which the storage tool reads as an option (one run in 64). */
function newClusterId() {
  let clusterId;
  do clusterId = crypto.randomBytes(16).toString('base64url').slice(0, 22);
  while (clusterId.startsWith('-'));
  return clusterId;
}

/** Formats the node's storage with `clusterId` unless it was formatted before (a restart keeps its data). */
async function formatOnce(dir, config, java, clusterId) {
  if (fs.existsSync(path.join(dir, 'data', 'meta.properties'))) return;
  await run('java', [...java, '-cp', classpath(), 'kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', config]);
}

/**
 * Spawns the node and resolves once it listens on `port`; rejects if it exits first.
 * @returns {Promise<import('node:child_process').ChildProcess>}
 */
function spawnNode(dir, config, java, port, detached) {
  return startServer('java', [...java, '-cp', classpath(), 'kafka.Kafka', config], {
    name: 'Kafka',
    port,
    logFile: path.join(dir, 'stdout.log'),
    detached,
    timeoutMs: 90000,
    ready: (child) => childListens(child, port),
  });
}

/** Kept ports still free, or fresh ones (another process holds a kept port now: another stack, a leftover). */
async function keptOrFreePorts(file, count) {
  /** @type {Array<{ port: number; controllerPort: number }>} */
  let ports = [];
  if (fs.existsSync(file)) {
    const kept = JSON.parse(fs.readFileSync(file, 'utf8'));
    ports = Array.isArray(kept) ? kept : [kept];
    for (const { port, controllerPort } of ports) {
      if ((await canConnect(port)) || (await canConnect(controllerPort))) ports = [];
    }
  }
  if (ports.length !== count) {
    // Each port free a moment ago, and distinct (a port closed by freePort may be handed out again).
    const picked = new Set();
    while (picked.size < 2 * count) picked.add(await freePort());
    const list = [...picked];
    ports = Array.from({ length: count }, (_, i) => ({ port: list[2 * i], controllerPort: list[2 * i + 1] }));
  }
  fs.writeFileSync(file, JSON.stringify(ports));
  return ports;
}

/**
 * Starts a broker+controller. `dir` keeps config, data and log; reuse it to restart with the same data.
 * Returns `{ brokers, port, stop() }`.
 */
/** @param {{ dir: string; port?: number; controllerPort?: number; heapMb?: number; detached?: boolean }} options */
async function startKafka({ dir, port, controllerPort, heapMb = 512, detached = false }) {
  await ensureKafkaJars();
  fs.mkdirSync(dir, { recursive: true });
  if (!port || !controllerPort) {
    const [kept] = await keptOrFreePorts(path.join(dir, 'ports.json'), 1);
    port = port || kept?.port;
    controllerPort = controllerPort || kept?.controllerPort;
  }
  if (!port || !controllerPort) throw new Error('no ports for Kafka');
  fs.writeFileSync(path.join(dir, 'ports.json'), JSON.stringify({ port, controllerPort }));
  const config = writeConfig(dir, port, controllerPort);
  const java = javaOptions(dir, heapMb);
  await formatOnce(dir, config, java, newClusterId());
  const started = Date.now();
  const child = await spawnNode(dir, config, java, port, detached);
  say(
    `Kafka ${KAFKA_VERSION} listening on 127.0.0.1:${port} (started in ${((Date.now() - started) / 1000).toFixed(1)} s)`,
  );
  return {
    brokers: `127.0.0.1:${port}`,
    port,
    pid: child.pid,
    process: child,
    stop: () => stopProcess(child, 20000),
  };
}

/** Asks the cluster through `brokers` how many brokers it has registered (0 when it does not answer). */
async function registeredBrokers(brokers) {
  const { Kafka, logLevel } = require('kafkajs');
  const admin = new Kafka({
    clientId: 'vigil-local',
    brokers,
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
    connectionTimeout: 2000,
  }).admin();
  try {
    await admin.connect();
    return (await admin.describeCluster()).brokers.length;
  } catch {
    return 0;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/**
 * Starts `size` combined broker+controller nodes on this machine, one quorum (KRaft), each with its own ports and
 * folder under `dir` (kept: reuse `dir` to restart with the same data). Topics created without a replication factor
 * get `size` replicas, and an acks=all write needs `minInsync` of them (default: all but one). Resolves once every
 * node is registered. `nodes[i].kill()` SIGKILLs a node and `nodes[i].start()` starts it again on its ports and data.
 * @param {{ dir: string; size?: number; minInsync?: number; heapMb?: number; detached?: boolean }} options
 */
async function startKafkaCluster({ dir, size = 3, minInsync = Math.max(1, size - 1), heapMb = 256, detached = false }) {
  if (!Number.isInteger(size) || size < 1) throw new Error(`a Kafka cluster needs at least one node, not ${size}`);
  await ensureKafkaJars();
  fs.mkdirSync(dir, { recursive: true });
  const ports = await keptOrFreePorts(path.join(dir, 'ports.json'), size);
  const voters = ports.map(({ controllerPort }, i) => `${i + 1}@127.0.0.1:${controllerPort}`).join(',');
  const idFile = path.join(dir, 'cluster-id');
  if (!fs.existsSync(idFile)) fs.writeFileSync(idFile, newClusterId());
  const clusterId = fs.readFileSync(idFile, 'utf8').trim();
  const brokers = ports.map(({ port }) => `127.0.0.1:${port}`);
  const nodes = ports.map(({ port, controllerPort }, i) => {
    const nodeDir = path.join(dir, `node-${i + 1}`);
    fs.mkdirSync(nodeDir, { recursive: true });
    const config = writeConfig(nodeDir, port, controllerPort, {
      id: i + 1,
      voters,
      replicas: size,
      minInsync,
    });
    const java = javaOptions(nodeDir, heapMb);
    /** @type {import('node:child_process').ChildProcess | null} */
    let child = null;
    const node = {
      id: i + 1,
      port,
      broker: `127.0.0.1:${port}`,
      dir: nodeDir,
      get pid() {
        return child?.pid;
      },
      get process() {
        return child;
      },
      /** Starts the node (formatting its storage on the first start); resolves once it listens. */
      async start() {
        if (child && child.exitCode === null && child.signalCode === null) return;
        await formatOnce(nodeDir, config, java, clusterId);
        child = await spawnNode(nodeDir, config, java, port, detached);
      },
      /** SIGKILLs the node; resolves once it has exited. */
      async kill() {
        const current = child;
        if (!current || current.exitCode !== null || current.signalCode !== null) return;
        const exited = new Promise((resolve) => current.once('exit', resolve));
        current.kill('SIGKILL');
        await exited;
      },
      stop: () => stopProcess(child, 20000),
    };
    return node;
  });
  const started = Date.now();
  const stop = async () => {
    await Promise.allSettled(nodes.map((node) => node.stop()));
  };
  try {
    // Side by side: a node waits for a quorum of controllers before it serves.
    await Promise.all(nodes.map((node) => node.start()));
    await waitUntil(async () => (await registeredBrokers(brokers)) === size, {
      timeoutMs: 90000,
      intervalMs: 500,
      what: `${size} Kafka brokers to register`,
    });
  } catch (err) {
    await stop();
    throw err;
  }
  say(
    `Kafka ${KAFKA_VERSION} cluster of ${size} listening on ${brokers.join(',')} (started in ${((Date.now() - started) / 1000).toFixed(1)} s)`,
  );
  return { brokers: brokers.join(','), nodes, stop };
}

module.exports = {
  KAFKA_VERSION,
  ensureKafkaJars,
  startKafka,
  startKafkaCluster,
  registeredBrokers,
  kafkaClasspath: classpath,
};
