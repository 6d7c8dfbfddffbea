'use strict';
// `npm run servers`: starts only Kafka and the MongoDB-wire server (kept under .vigil/) and prints their addresses,
// for running tests or services by hand. Ctrl-C stops them.
const path = require('node:path');
const { ROOT, say } = require('./util');
const { startServers } = require('./servers');

startServers({ dir: path.join(ROOT, '.vigil', 'servers') })
  .then((servers) => {
    process.stdout.write(`KAFKA_BROKERS=${servers.kafkaBrokers}\nMONGO_URL=${servers.mongoUrl}\n`);
    const stop = () => {
      say('stopping servers');
      servers.stop().then(() => process.exit(0));
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  })
  .catch((err) => {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  });
