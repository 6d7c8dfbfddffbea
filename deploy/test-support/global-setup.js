'use strict';
// When jest runs without `npm test` (e.g. `npx jest --selectProjects integration`), start the servers here.
const { startServers, freshDir } = require('../local/servers');

module.exports = async function globalSetup() {
  if (process.env.KAFKA_BROKERS && process.env.MONGO_URL) return;
  const servers = await startServers({ dir: freshDir('jest'), ephemeral: true });
  process.env.KAFKA_BROKERS = servers.kafkaBrokers;
  process.env.MONGO_URL = servers.mongoUrl;
  globalThis.__VIGIL_SERVERS__ = servers;
};
