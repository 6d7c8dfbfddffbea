'use strict';
// Picks the Kafka and MongoDB-wire servers for a run, in this order:
//   1. KAFKA_BROKERS / MONGO_URL from the environment (each on its own),
//   2. testcontainers, when a container runtime answers,
//   3. local processes (./kafka.js, ./mongo.js).
// `kafkaNodes` above 1 asks for a Kafka cluster of that many local processes (never a container, never
// KAFKA_BROKERS): replicated topics, one node may die.
const path = require('node:path');
const fs = require('node:fs');
const { say } = require('./util');
const { startKafka, startKafkaCluster, ensureKafkaJars } = require('./kafka');
const { startMongo, ensureMongo } = require('./mongo');

async function dockerAvailable() {
  if (process.env.VIGIL_NO_DOCKER === 'true') return false;
  try {
    const { getContainerRuntimeClient } = require('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

/**
 * Fetches the Kafka jars and builds or installs the store's binaries that a later `startServers` would need, without
 * npm packages, so that a first run can do it while npm installs and TypeScript builds. Skipped where the servers are
 * given (`KAFKA_BROKERS`, `MONGO_URL`) or where a container runtime may answer (testcontainers starts them there).
 */
async function prepareServerBinaries() {
  const maybeDocker =
    process.env.VIGIL_NO_DOCKER !== 'true' &&
    (Boolean(process.env.DOCKER_HOST) || fs.existsSync('/var/run/docker.sock'));
  if (maybeDocker) return;
  await Promise.all([!process.env.KAFKA_BROKERS && ensureKafkaJars(), !process.env.MONGO_URL && ensureMongo()]);
}

/**
 * Starts what is missing. `dir` holds local servers' data (throwaway with `ephemeral`, kept for `npm run up`);
 * `durable` (default: not ephemeral) keeps the store's fsync on. `kafkaNodes` (default 1): see above; the cluster's
 * data is kept apart from the single node's. Returns `{ kafkaBrokers, mongoUrl, sources, kafkaCluster, stop() }`
 * (`kafkaCluster`: the nodes, when several were started); stop() stops only what this call started, and a failed
 * start stops whatever it had started before failing.
 * @param {{ dir: string; ephemeral?: boolean; durable?: boolean; detached?: boolean; kafkaNodes?: number }} options
 * @returns {Promise<{ kafkaBrokers: string; mongoUrl: string; sources: Record<string, string>; kafkaCluster?: import('./kafka').KafkaCluster; stop: () => Promise<void> }>}
 */
async function startServers({ dir, ephemeral = false, durable = !ephemeral, detached = false, kafkaNodes = 1 }) {
  if (kafkaNodes > 1 && process.env.KAFKA_BROKERS)
    throw new Error(`a local Kafka cluster of ${kafkaNodes} was asked for, but KAFKA_BROKERS is set: unset one`);
  const stops = [];
  /** @type {Record<string, string>} */
  const sources = {};
  /** @type {import('./kafka').KafkaCluster | undefined} */
  let kafkaCluster;
  let kafkaBrokers = process.env.KAFKA_BROKERS;
  let mongoUrl = process.env.MONGO_URL;
  if (kafkaBrokers) sources.kafka = 'KAFKA_BROKERS';
  if (mongoUrl) sources.mongo = 'MONGO_URL';
  try {
    if ((!kafkaBrokers || !mongoUrl) && (await dockerAvailable())) {
      say('container runtime found: starting servers with testcontainers');
      if (!kafkaBrokers && kafkaNodes === 1) {
        const { KafkaContainer } = require('@testcontainers/kafka');
        const kafka = await new KafkaContainer('confluentinc/cp-kafka:7.7.1').withKraft().start();
        stops.push(() => kafka.stop());
        kafkaBrokers = `${kafka.getHost()}:${kafka.getMappedPort(9093)}`;
        sources.kafka = 'testcontainers';
      }
      if (!mongoUrl) {
        const { MongoDBContainer } = require('@testcontainers/mongodb');
        const mongo = await new MongoDBContainer('mongo:7.0').start();
        stops.push(() => mongo.stop());
        mongoUrl = `${mongo.getConnectionString()}/?directConnection=true`;
        sources.mongo = 'testcontainers';
      }
    }
    // Resolve jars and build FerretDB in parallel on a first run; start both servers in parallel too.
    const kafkaNeeded = !kafkaBrokers;
    const mongoNeeded = !mongoUrl;
    await Promise.all([kafkaNeeded && ensureKafkaJars(), mongoNeeded && ensureMongo()]);
    const started = await Promise.allSettled([
      !kafkaNeeded
        ? null
        : kafkaNodes > 1
          ? startKafkaCluster({ dir: path.join(dir, `kafka-cluster-${kafkaNodes}`), size: kafkaNodes, detached })
          : startKafka({ dir: path.join(dir, 'kafka'), detached }),
      mongoNeeded ? startMongo({ dir: path.join(dir, 'mongo'), ephemeral, durable, detached }) : null,
    ]);
    // One failed: stop the other too (the catch below stops what is in `stops`).
    for (const result of started) if (result.status === 'fulfilled' && result.value) stops.push(result.value.stop);
    const failed = started.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
    const [kafkaResult, mongoResult] = started;
    const kafka = kafkaResult?.status === 'fulfilled' ? kafkaResult.value : null;
    const mongo = mongoResult?.status === 'fulfilled' ? mongoResult.value : null;
    if (kafka && 'brokers' in kafka) {
      kafkaBrokers = kafka.brokers;
      sources.kafka = 'local process';
      if ('nodes' in kafka) {
        kafkaCluster = kafka;
        sources.kafka = `local cluster of ${kafka.nodes.length}`;
      }
    }
    if (mongo && 'url' in mongo) {
      mongoUrl = mongo.url;
      sources.mongo = `local ${mongo.kind}`;
    }
  } catch (err) {
    await Promise.allSettled(stops.map((stop) => stop()));
    throw err;
  }
  if (!kafkaBrokers || !mongoUrl) throw new Error('no Kafka or MongoDB-wire server was started');
  return {
    kafkaBrokers,
    mongoUrl,
    sources,
    kafkaCluster,
    stop: async () => {
      await Promise.allSettled(stops.reverse().map((stop) => stop()));
    },
  };
}

function freshDir(name) {
  const base = path.join(require('node:os').tmpdir(), 'vigil');
  fs.mkdirSync(base, { recursive: true });
  return fs.mkdtempSync(path.join(base, `${name}-`));
}

module.exports = { startServers, prepareServerBinaries, dockerAvailable, freshDir };
