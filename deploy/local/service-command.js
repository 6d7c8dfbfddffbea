'use strict';
// How a service process starts, everywhere it is started from this repository (`npm run up`, the benchmarks, the
// tests); the images' CMD and each service's `npm start` say the same.
const path = require('node:path');

/**
 * V8 flags of every service. A young generation of at most 3 × 4 MB instead of Node's 3 × 16 MB: the services keep
 * little live data and allocate fast under load, so the default young generation made up most of their resident
 * memory (moderate benchmark: moderator 181 → 143 MB, gateway 158 → 126 MB peak RSS) at no measured cost in
 * throughput.
 */
const SERVICE_NODE_FLAGS = ['--max-semi-space-size=4'];

/** The arguments after `node` that start `name` from its build, under the repository root `root`. */
function serviceArgs(root, name) {
  return [...SERVICE_NODE_FLAGS, path.join(root, name, 'dist', 'main.js')];
}

module.exports = { SERVICE_NODE_FLAGS, serviceArgs };
