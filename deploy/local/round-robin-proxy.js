'use strict';
// A TCP proxy that hands each new connection to the next of several backends (the gateways of `npm run up --
// --replicas N`), skipping a backend that refuses: one address for the API while any gateway runs.
const net = require('node:net');

/**
 * Listens on `host:port` (0: any free port); each connection goes to the next backend port on `backendHost`, in
 * turn, or to the one after it when that one does not accept. A connection no backend accepts is closed.
 * @param {{ port: number; host?: string; backendHost?: string; backends: number[] }} options
 * @returns {Promise<{ port: number; close: () => Promise<void> }>}
 */
async function startRoundRobinProxy({ port, host = '127.0.0.1', backendHost = '127.0.0.1', backends }) {
  if (backends.length === 0) throw new Error('the proxy needs at least one backend');
  let next = 0;
  /** @type {Set<net.Socket>} */
  const sockets = new Set();
  const track = (/** @type {net.Socket} */ socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };

  /** Connects to the backends from `first` on; resolves to the first socket that connects, or null. */
  const connect = async (first) => {
    for (let i = 0; i < backends.length; i += 1) {
      const backendPort = Number(backends[(first + i) % backends.length]);
      const socket = await new Promise((resolve) => {
        const attempt = net.connect({ port: backendPort, host: backendHost });
        attempt.once('connect', () => resolve(attempt));
        attempt.once('error', () => {
          attempt.destroy();
          resolve(null);
        });
      });
      if (socket) return /** @type {net.Socket} */ (socket);
    }
    return null;
  };

  const server = net.createServer({ pauseOnConnect: true }, (client) => {
    track(client);
    client.on('error', () => client.destroy());
    const first = next;
    next = (next + 1) % backends.length;
    connect(first).then(
      (backend) => {
        if (!backend || client.destroyed) {
          backend?.destroy();
          client.destroy();
          return;
        }
        track(backend);
        backend.on('error', () => backend.destroy());
        backend.once('close', () => client.destroy());
        client.once('close', () => backend.destroy());
        client.pipe(backend);
        backend.pipe(client);
        client.resume();
      },
      () => client.destroy(),
    );
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(undefined));
  });
  const address = /** @type {net.AddressInfo} */ (server.address());
  return {
    port: address.port,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

module.exports = { startRoundRobinProxy };
