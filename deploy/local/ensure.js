'use strict';
// Installs npm dependencies when missing or stale and builds the TypeScript projects.
// Usage: node deploy/local/ensure.js [deps|build]   (build implies deps)
const fs = require('node:fs');
const path = require('node:path');
const { ROOT, say, run } = require('./util');

async function ensureDeps() {
  const lock = path.join(ROOT, 'package-lock.json');
  const marker = path.join(ROOT, 'node_modules', '.package-lock.json');
  if (fs.existsSync(marker) && fs.statSync(marker).mtimeMs >= fs.statSync(lock).mtimeMs) return;
  say('installing npm dependencies (npm ci)');
  await run('npm', ['ci', '--no-audit', '--no-fund'], { cwd: ROOT, echo: true });
}

async function ensureBuild() {
  await ensureDeps();
  say('building TypeScript (tsc -b)');
  await run(path.join(ROOT, 'node_modules', '.bin', 'tsc'), ['-b'], { cwd: ROOT, echo: true });
}

module.exports = { ensureDeps, ensureBuild };

if (require.main === module) {
  const step = process.argv[2] || 'build';
  (step === 'deps' ? ensureDeps() : ensureBuild()).catch((err) => {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  });
}
