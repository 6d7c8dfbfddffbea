'use strict';
// Creates Vigil's Kafka topics when missing; run by the chart's pre-install/pre-upgrade Job with the moderator image
// (copied next to the moderator's dist/, so kafkajs, pino and @vigil/proto resolve from the image's node_modules).
// Idempotent: existing topics are left alone, except that with TOPIC_GROW_PARTITIONS=true a topic with fewer
// partitions than TOPIC_PARTITIONS is grown (never shrunk). MongoDB indexes are not created here: each service
// creates its own at start-up with idempotent createIndex calls, next to the queries that need them.
//
// Environment: KAFKA_BROKERS (required, comma-separated), KAFKA_TOPIC_PREFIX (default empty), TOPIC_PARTITIONS
// (default 6), TOPIC_REPLICATION_FACTOR (default -1: the brokers' default), TOPIC_GROW_PARTITIONS (default false),
// LOG_LEVEL (default info). Exit code 0 when every topic exists with at least the requested partitions.
const { Kafka, logLevel } = require('kafkajs');
const pino = require('pino');
const { topicNames } = require('@vigil/proto');

function integer(name, fallback, min) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}`);
  return value;
}

function settings(env = process.env) {
  const brokers = (env.KAFKA_BROKERS || '')
    .split(',')
    .map((broker) => broker.trim())
    .filter(Boolean);
  if (brokers.length === 0) throw new Error('KAFKA_BROKERS is required');
  const grow = env.TOPIC_GROW_PARTITIONS || 'false';
  if (grow !== 'true' && grow !== 'false') throw new Error('TOPIC_GROW_PARTITIONS must be true or false');
  const replicationFactor = integer('TOPIC_REPLICATION_FACTOR', -1, -1);
  if (replicationFactor === 0) throw new Error('TOPIC_REPLICATION_FACTOR must be -1 or at least 1');
  return {
    brokers,
    prefix: env.KAFKA_TOPIC_PREFIX || '',
    partitions: integer('TOPIC_PARTITIONS', 6, 1),
    replicationFactor,
    grow: grow === 'true',
  };
}

async function initTopics(config, log) {
  const kafka = new Kafka({ clientId: 'vigil-init-topics', brokers: config.brokers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const wanted = Object.values(topicNames(config.prefix));
    const existing = new Set(await admin.listTopics());
    const missing = wanted.filter((topic) => !existing.has(topic));
    if (missing.length > 0) {
      try {
        await admin.createTopics({
          waitForLeaders: true,
          topics: missing.map((topic) => ({
            topic,
            numPartitions: config.partitions,
            replicationFactor: config.replicationFactor,
          })),
        });
      } catch (/** @type {any} */ err) {
        // A service (the moderator creates its own topics when missing) may have won the race: fine.
        if (err.type !== 'TOPIC_ALREADY_EXISTS' && !String(err.message).includes('already exists')) throw err;
      }
      for (const topic of missing) log.info({ topic, partitions: config.partitions }, 'topic created');
    }
    const metadata = await admin.fetchTopicMetadata({ topics: wanted });
    const short = [];
    for (const { name, partitions } of metadata.topics) {
      if (partitions.length >= config.partitions) continue;
      if (config.grow) {
        await admin.createPartitions({ topicPartitions: [{ topic: name, count: config.partitions }] });
        log.warn({ topic: name, from: partitions.length, to: config.partitions }, 'topic partitions grown');
      } else {
        short.push(name);
        log.warn(
          { topic: name, partitions: partitions.length, wanted: config.partitions },
          'topic has fewer partitions than configured',
        );
      }
    }
    log.info({ topics: wanted.length, short: short.length }, 'topics ready');
    return { created: missing, short };
  } finally {
    await admin.disconnect();
  }
}

module.exports = { initTopics, settings };

if (require.main === module) {
  const log = pino({ level: process.env.LOG_LEVEL || 'info', base: { service: 'init-topics' } });
  Promise.resolve()
    .then(() => initTopics(settings(), log))
    .then(() => process.exit(0))
    .catch((err) => {
      log.fatal({ err: { type: err.type, message: err.message } }, 'topic initialisation failed');
      process.exit(1);
    });
}
