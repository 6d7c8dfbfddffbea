'use strict';
// Makes sure a Chromium for the browser tests exists at /usr/bin/chromium: Debian's `chromium` package, installed
// with apt-get when running as root and missing. Nothing is downloaded at test run time by the test driver itself
// (playwright-core is pointed at this executable). Throws with a clear message when it cannot be had.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');

const CHROMIUM = '/usr/bin/chromium';

function ensureChromium() {
  if (fs.existsSync(CHROMIUM)) return CHROMIUM;
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!root || !fs.existsSync('/usr/bin/apt-get')) {
    throw new Error(
      `the browser tests need ${CHROMIUM}: install Debian's chromium package (sudo apt-get install -y chromium)`,
    );
  }
  process.stderr.write('[vigil] installing chromium with apt-get (first run only)\n');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], { stdio: 'inherit', env });
  } catch {
    execFileSync('apt-get', ['update'], { stdio: 'inherit', env });
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], { stdio: 'inherit', env });
  }
  if (!fs.existsSync(CHROMIUM)) throw new Error(`apt-get installed chromium but ${CHROMIUM} is still missing`);
  return CHROMIUM;
}

module.exports = { ensureChromium, CHROMIUM };

if (require.main === module) process.stdout.write(`${ensureChromium()}\n`);
