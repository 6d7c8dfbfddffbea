'use strict';
// Apache Kafka as a local process: jars resolved from Maven Central into the cache, single-node KRaft.
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const crypto = require('node:crypto');
const { CACHE_DIR, say, freePort, canConnect, childListens, waitUntil, run, stopProcess } = require('./util');

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

function writeConfig(dir, port, controllerPort) {
  const config = [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
    `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
    'controller.listener.names=CONTROLLER',
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'inter.broker.listener.name=PLAINTEXT',
    `log.dirs=${path.join(dir, 'data')}`,
    'num.partitions=3',
    'auto.create.topics.enable=true',
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=3',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'group.initial.rebalance.delay.ms=0',
    'log.flush.interval.messages=9223372036854775807',
    'metadata.max.idle.interval.ms=5000',
  ].join('\n');
  const file = path.join(dir, 'server.properties');
  fs.writeFileSync(file, config + '\n');
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

/**
 * Starts a broker+controller. `dir` keeps config, data and log; reuse it to restart with the same data.
 * Returns `{ brokers, port, stop() }`.
 */
/** @param {{ dir: string; port?: number; controllerPort?: number; heapMb?: number; detached?: boolean }} options */
async function startKafka({ dir, port, controllerPort, heapMb = 512, detached = false }) {
  await ensureKafkaJars();
  fs.mkdirSync(dir, { recursive: true });
  const portFile = path.join(dir, 'ports.json');
  if (!port && fs.existsSync(portFile)) {
    ({ port, controllerPort } = JSON.parse(fs.readFileSync(portFile, 'utf8')));
    // Kept ports another process holds now (another stack, a leftover) are given up for free ones.
    const taken = async (/** @type {number | undefined} */ p) => p !== undefined && (await canConnect(p));
    if ((await taken(port)) || (await taken(controllerPort))) port = controllerPort = undefined;
  }
  port = port || (await freePort());
  controllerPort = controllerPort || (await freePort());
  fs.writeFileSync(portFile, JSON.stringify({ port, controllerPort }));
  const config = writeConfig(dir, port, controllerPort);
  const java = ['-Xms' + heapMb + 'm', '-Xmx' + heapMb + 'm', '-XX:+UseG1GC', '-Djava.awt.headless=true'];
  java.push(`-Dlog4j.configuration=file:${path.join(dir, 'log4j.properties')}`);
  if (!fs.existsSync(path.join(dir, 'data', 'meta.properties'))) {
    // A base64url id may start with '-', which the storage tool's argument parser reads as an option (one run in 64).
    let clusterId;
    do clusterId = crypto.randomBytes(16).toString('base64url').slice(0, 22);
    while (clusterId.startsWith('-'));
    await run('java', [
      ...java,
      '-cp',
      classpath(),
      'kafka.tools.StorageTool',
      'format',
      '-t',
      clusterId,
      '-c',
      config,
    ]);
  }
  const started = Date.now();
  const out = fs.openSync(path.join(dir, 'stdout.log'), 'a');
  const child = spawn('java', [...java, '-cp', classpath(), 'kafka.Kafka', config], {
    stdio: ['ignore', out, out],
    detached,
  });
  fs.closeSync(out);
  let exited = false;
  child.once('exit', () => (exited = true));
  await waitUntil(
    async () => {
      if (exited) throw new Error(`Kafka exited during start; see ${path.join(dir, 'stdout.log')}`);
      return childListens(child, port);
    },
    { timeoutMs: 90000, what: `Kafka on port ${port}` },
  );
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

module.exports = { KAFKA_VERSION, ensureKafkaJars, startKafka, kafkaClasspath: classpath };
