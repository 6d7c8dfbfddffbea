'use strict';
// Vigil's topics created up front, as the chart's topics Job does (deploy/images/init-topics.js), for local runs whose
// topics need settings the services do not give (a replication factor) or whose services start side by side.
const { say } = require('./util');

/**
 * Creates the topics of `prefix` when missing, with `partitions` partitions and `replicationFactor` replicas (-1: the
 * brokers' default). Just after a cluster starts, or while a node restarts, metadata may lag ("does not host this
 * topic-partition"): retriable errors are tried again until `timeoutMs`.
 * @param {{ brokers: string; prefix?: string; partitions?: number; replicationFactor?: number; timeoutMs?: number }} options
 */
async function ensureTopics({ brokers, prefix = '', partitions = 6, replicationFactor = -1, timeoutMs = 60000 }) {
  const { initTopics } = require('../images/init-topics');
  const config = { brokers: brokers.split(','), prefix, partitions, replicationFactor, grow: false };
  const quiet = { info: () => undefined, warn: () => undefined };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await initTopics(config, quiet);
      break;
    } catch (/** @type {any} */ err) {
      const retriable = err?.retriable === true || err?.cause?.retriable === true;
      if (!retriable || Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  say(
    `topics ready: ${partitions} partitions, replication factor ${replicationFactor === -1 ? 'default' : replicationFactor}`,
  );
}

module.exports = { ensureTopics };
