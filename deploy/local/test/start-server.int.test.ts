import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { canConnect, freePort, startServer, stopProcess } from '../util';

// How the local scripts start a server (PostgreSQL, FerretDB or mongod, a Kafka node): once it listens, or not at all.
describe('startServer', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-start-server-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('resolves once the server is ready, its output appended to the log', async () => {
    const port = await freePort();
    const logFile = path.join(dir, 'listening.log');
    const script = `require('node:net').createServer().listen(${port}, '127.0.0.1', () => console.log('up'))`;
    const child = await startServer(process.execPath, ['-e', script], {
      name: 'a listener',
      port,
      logFile,
      timeoutMs: 20000,
      ready: () => canConnect(port),
    });
    try {
      expect(child.exitCode).toBeNull();
      await expect(canConnect(port)).resolves.toBe(true);
      expect(fs.readFileSync(logFile, 'utf8')).toContain('up');
    } finally {
      await stopProcess(child, 5000);
    }
  });

  it('rejects naming the log when the server exits during its start', async () => {
    const logFile = path.join(dir, 'quitter.log');
    await expect(
      startServer(process.execPath, ['-e', 'process.exit(3)'], {
        name: 'a quitter',
        port: 1,
        logFile,
        timeoutMs: 20000,
        ready: () => false,
      }),
    ).rejects.toThrow(`a quitter exited during start; see ${logFile}`);
  });

  it('stops a server that is not ready in time, and says what it waited for', async () => {
    const port = await freePort();
    const pidFile = path.join(dir, 'sleeper.pid');
    const script = `require('node:fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000)`;
    await expect(
      startServer(process.execPath, ['-e', script], {
        name: 'a sleeper',
        port,
        logFile: path.join(dir, 'sleeper.log'),
        timeoutMs: 3000,
        ready: () => false,
      }),
    ).rejects.toThrow(`waiting for a sleeper on port ${port}`);
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    expect(() => process.kill(pid, 0)).toThrow();
  });
});
