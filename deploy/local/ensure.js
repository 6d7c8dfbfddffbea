'use strict';
// Installs npm dependencies when missing or stale and builds the TypeScript projects.
// Usage: node deploy/local/ensure.js [deps|build]   (build implies deps)
const fs = require('node:fs');
const path = require('node:path');
const { ROOT, say, run } = require('./util');

// The fingerprint of every manifest and the lockfile, kept in node_modules after a successful install.
function depsFingerprint() {
  const files = [
    'package.json',
    'package-lock.json',
    'proto/package.json',
    'gateway/package.json',
    'moderator/package.json',
    'notifier/package.json',
  ];
  const hash = require('node:crypto').createHash('sha256');
  for (const file of files) hash.update(fs.readFileSync(path.join(ROOT, file)));
  return hash.digest('hex');
}

async function ensureDeps() {
  const marker = path.join(ROOT, 'node_modules', '.vigil-deps');
  const wanted = depsFingerprint();
  if (fs.existsSync(marker) && fs.readFileSync(marker, 'utf8') === wanted) return;
  // `npm ci`: exactly the locked tree, or a failure when package.json and the lockfile disagree (run `npm install`
  // after changing a manifest). The lockfile records every platform's optional packages (@swc/core's binaries…).
  say('installing npm dependencies (npm ci)');
  await run('npm', ['ci', '--no-audit', '--no-fund'], { cwd: ROOT, echo: true });
  fs.writeFileSync(marker, depsFingerprint());
}

/**
 * Writes the gRPC types from the .proto files (`npm run generate -w proto`) into a fresh proto/src/generated: they are
 * build output, not kept in git, and a message removed from a .proto must not leave its file behind.
 */
async function generateTypes() {
  fs.rmSync(path.join(ROOT, 'proto', 'src', 'generated'), { recursive: true, force: true });
  await run('npm', ['run', 'generate', '--workspace', 'proto', '--silent'], { cwd: ROOT, echo: true });
}

async function ensureBuild() {
  await ensureDeps();
  say('generating the gRPC types and building TypeScript (tsc -b)');
  await generateTypes();
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
