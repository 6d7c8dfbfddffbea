'use strict';
// Stripe's own mock of its API (github.com/stripe/stripe-mock), for tests of the payment actions: it validates each
// request against Stripe's published OpenAPI description (`-beta` adds the preview parameters, `risk_controls` among
// them) and answers from Stripe's fixtures. Installed with Go into the cache on first use, like the FerretDB launcher.
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { CACHE_DIR, say, waitUntil, run, stopProcess } = require('./util');

const STRIPE_MOCK_VERSION = 'v0.203.0';
const BIN_DIR = path.join(CACHE_DIR, `stripe-mock-${STRIPE_MOCK_VERSION}`);
const BIN = path.join(BIN_DIR, 'stripe-mock');

async function ensureStripeMock() {
  if (fs.existsSync(BIN)) return BIN;
  say(`installing stripe-mock ${STRIPE_MOCK_VERSION} with Go into ${BIN_DIR} (first run only)`);
  fs.mkdirSync(BIN_DIR, { recursive: true });
  const started = Date.now();
  await run('go', ['install', `github.com/stripe/stripe-mock@${STRIPE_MOCK_VERSION}`], {
    cwd: BIN_DIR,
    env: { ...process.env, GOBIN: BIN_DIR, CGO_ENABLED: '0', GOFLAGS: '-mod=mod -buildvcs=false' },
  });
  say(`stripe-mock installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return BIN;
}

/** Starts stripe-mock on free loopback ports; resolves to `{ url, stop() }` once it listens. */
async function startStripeMock() {
  const bin = await ensureStripeMock();
  // Port 0 for both listeners: stripe-mock opens HTTPS too, on a fixed default port unless told otherwise.
  const child = spawn(bin, ['-beta', '-http-addr', '127.0.0.1:0', '-https-addr', '127.0.0.1:0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk) => (output = (output + chunk.toString()).slice(-20000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exited = false;
  child.once('exit', () => (exited = true));
  let port;
  try {
    await waitUntil(
      () => {
        if (exited) throw new Error(`stripe-mock exited during start:\n${output}`);
        port = /Listening for HTTP at address: 127\.0\.0\.1:(\d+)/.exec(output)?.[1];
        return port !== undefined;
      },
      { timeoutMs: 60000, intervalMs: 100, what: 'stripe-mock to listen' },
    );
  } catch (err) {
    await stopProcess(child, 5000);
    throw err;
  }
  return { url: `http://127.0.0.1:${port}`, stop: () => stopProcess(child, 5000) };
}

module.exports = { STRIPE_MOCK_VERSION, ensureStripeMock, startStripeMock };
