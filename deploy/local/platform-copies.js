'use strict';
// Each service keeps its runtime glue (logger, shutdown, admin server, retry helper) in its own src/platform/, as
// copies rather than a shared package: the contracts package holds contracts only, the top-level folders are fixed,
// and the glue is small. This check keeps the copies identical: the files every service needs must exist in each,
// and any platform file found in more than one service must be the same bytes (tests next to them are exempt).
// Run by `npm test`, or alone: node deploy/local/platform-copies.js
const fs = require('node:fs');
const path = require('node:path');
const { ROOT } = require('./util');

const SERVICES = ['gateway', 'moderator', 'notifier'];
/** Files every service must have. */
const REQUIRED = ['admin-server.ts', 'logger.ts', 'shutdown.ts'];

/** Problems found under `root` (the repository root), one line each; empty when the copies agree. */
function platformCopyProblems(root = ROOT) {
  const problems = [];
  /** file name → service → contents */
  const copies = new Map();
  for (const service of SERVICES) {
    const dir = path.join(root, service, 'src', 'platform');
    const names = fs.existsSync(dir) ? fs.readdirSync(dir) : [];
    for (const name of REQUIRED) {
      if (!names.includes(name)) problems.push(`${service}/src/platform/${name} is missing`);
    }
    for (const name of names) {
      if (name.endsWith('.test.ts')) continue;
      const file = path.join(dir, name);
      if (!fs.statSync(file).isFile()) continue;
      if (!copies.has(name)) copies.set(name, new Map());
      copies.get(name).set(service, fs.readFileSync(file));
    }
  }
  for (const [name, byService] of [...copies].sort(([a], [b]) => a.localeCompare(b))) {
    const services = [...byService.keys()];
    const [first, ...others] = services;
    const differing = others.filter((service) => !byService.get(service).equals(byService.get(first)));
    if (differing.length > 0) {
      problems.push(
        `src/platform/${name} differs between ${[first, ...differing].join(', ')}: change every copy alike ` +
          `(diff ${first}/src/platform/${name} ${differing[0]}/src/platform/${name})`,
      );
    }
  }
  return problems;
}

module.exports = { platformCopyProblems, SERVICES, REQUIRED };

if (require.main === module) {
  const problems = platformCopyProblems();
  for (const problem of problems) process.stderr.write(`${problem}\n`);
  if (problems.length > 0) process.exit(1);
  process.stdout.write('platform copies identical\n');
}
