'use strict';
// Picks the Kafka and MongoDB-wire servers for a run, in this order:
//   1. KAFKA_BROKERS / MONGO_URL from the environment (each on its own),
//   2. testcontainers, when a container runtime answers,
//   3. local processes (./kafka.js, ./mongo.js).
const path = require('node:path');
const fs = require('node:fs');
const { say } = require('./util');
const { startKafka, ensureKafkaJars } = require('./kafka');
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
 * Starts what is missing. `dir` holds local servers' data (throwaway with `ephemeral`, kept for `npm run up`);
 * `durable` (default: not ephemeral) keeps the store's fsync on. Returns `{ kafkaBrokers, mongoUrl, sources, stop() }`; stop() stops only what this call started, and
 * a failed start stops whatever it had started before failing.
 * @param {{ dir: string; ephemeral?: boolean; durable?: boolean; detached?: boolean }} options
 * @returns {Promise<{ kafkaBrokers: string; mongoUrl: string; sources: Record<string, string>; stop: () => Promise<void> }>}
 */
async function startServers({ dir, ephemeral = false, durable = !ephemeral, detached = false }) {
  const stops = [];
  /** @type {Record<string, string>} */
  const sources = {};
  let kafkaBrokers = process.env.KAFKA_BROKERS;
  let mongoUrl = process.env.MONGO_URL;
  if (kafkaBrokers) sources.kafka = 'KAFKA_BROKERS';
  if (mongoUrl) sources.mongo = 'MONGO_URL';
  try {
    if ((!kafkaBrokers || !mongoUrl) && (await dockerAvailable())) {
      say('container runtime found: starting servers with testcontainers');
      if (!kafkaBrokers) {
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
      kafkaNeeded ? startKafka({ dir: path.join(dir, 'kafka'), detached }) : null,
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

module.exports = { startServers, dockerAvailable, freshDir };
