'use strict';
// Small process helpers shared by the local scripts (plain CommonJS so they run before anything is built).
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const CACHE_DIR = process.env.VIGIL_CACHE_DIR || path.join(os.homedir(), '.cache', 'vigil');

function say(message) {
  process.stderr.write(`[vigil] ${message}\n`);
}

/** Resolves to a TCP port that was free a moment ago. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {net.AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
}

function canConnect(port, host = '127.0.0.1') {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/**
 * Whether process `pid` holds a listening TCP socket on `port` (rather than another process: a second stack, a
 * leftover). Read from /proc on Linux: the inodes of the sockets listening on the port, against the process's open
 * descriptors. `undefined` where /proc cannot tell (another system).
 */
function listensOn(pid, port) {
  if (!fs.existsSync('/proc/net/tcp')) return undefined;
  const inodes = new Set();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!fs.existsSync(file)) continue;
    for (const line of fs.readFileSync(file, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // local_address is HEXIP:HEXPORT; state 0A is LISTEN; column 10 is the socket's inode.
      if (cols.length < 10 || cols[3] !== '0A') continue;
      if (parseInt(cols[1]?.split(':').pop() ?? '', 16) === port) inodes.add(cols[9]);
    }
  }
  let fds;
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  for (const fd of fds) {
    try {
      const socket = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (socket && inodes.has(socket[1])) return true;
    } catch {
      // closed meanwhile
    }
  }
  return false;
}

/** Whether `child` itself (not another process on the same port) accepts connections on `port`. */
async function childListens(child, port) {
  if (!(await canConnect(port))) return false;
  return listensOn(child.pid, port) !== false;
}

/** Polls `check` until it returns true, or fails after `timeoutMs` with `what` in the message. */
async function waitUntil(check, { timeoutMs, intervalMs = 200, what }) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Runs a command to completion; rejects with its output tail on a non-zero exit. */
function run(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    let output = '';
    const keep = (chunk) => {
      output = (output + chunk.toString()).slice(-20000);
      if (options.echo) process.stderr.write(chunk);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(output);
      else reject(new Error(`${command} ${args.join(' ')} exited with ${code}\n${output.slice(-4000)}`));
    });
  });
}

/** Whether an executable is on PATH. */
function onPath(name) {
  const dirs = (process.env.PATH || '').split(path.delimiter);
  const fs = require('node:fs');
  return dirs.some((dir) => {
    try {
      fs.accessSync(path.join(dir, name), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * Stops a child process: SIGTERM, then SIGKILL after `graceMs`. Resolves once it has exited.
 */
function stopProcess(child, graceMs = 10000) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(undefined);
    });
    child.kill('SIGTERM');
  });
}

/**
 * Spawns the server `name` with its output appended to `logFile`, and resolves once `ready(child)` holds. If it exits
 * first, or `timeoutMs` passes, it is stopped and the start rejects, naming the log.
 * @returns {Promise<import('node:child_process').ChildProcess>}
 */
async function startServer(command, args, { name, port, logFile, detached, env, timeoutMs, ready }) {
  const out = fs.openSync(logFile, 'a');
  const child = spawn(command, args, { stdio: ['ignore', out, out], detached, env });
  fs.closeSync(out);
  let exited = false;
  child.once('exit', () => (exited = true));
  try {
    await waitUntil(
      async () => {
        if (exited) throw new Error(`${name} exited during start; see ${logFile}`);
        return ready(child);
      },
      { timeoutMs, what: `${name} on port ${port}` },
    );
  } catch (err) {
    await stopProcess(child, 5000);
    throw err;
  }
  return child;
}

module.exports = {
  ROOT,
  CACHE_DIR,
  say,
  freePort,
  canConnect,
  listensOn,
  childListens,
  waitUntil,
  run,
  onPath,
  stopProcess,
  startServer,
};
