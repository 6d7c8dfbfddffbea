'use strict';

module.exports = async function globalTeardown() {
  const servers = globalThis.__VIGIL_SERVERS__;
  if (servers) await servers.stop();
};
