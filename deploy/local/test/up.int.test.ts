import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { MongoClient } from 'mongodb';
import { adminEnv } from '../admin';
import { checkSecretsMatchData, StartError } from '../local-secrets';
import { claimCluster, dataDirFor, removeCluster } from '../postgres';
import { freePort, listensOn } from '../util';
import { ROOT, testServers, uniqueName } from '../../test-support';

const run = promisify(execFile);

describe('npm run up', () => {
  it('stops before starting anything when a service port is taken, naming the port', async () => {
    // Another stack still running: its gateway admin port answers /readyz with 200.
    const other = http.createServer((_req, res) => res.writeHead(200).end('ok'));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const taken = (other.address() as { port: number }).port;
    const { kafkaBrokers, mongoUrl } = testServers();
    try {
      const env = {
        ...process.env,
        KAFKA_BROKERS: kafkaBrokers.join(','),
        MONGO_URL: mongoUrl,
        HTTP_PORT: String(await freePort()),
        VIGIL_GATEWAY_ADMIN_PORT: String(taken),
        VIGIL_MODERATOR_GRPC_PORT: String(await freePort()),
        VIGIL_MODERATOR_ADMIN_PORT: String(await freePort()),
        VIGIL_NOTIFIER_ADMIN_PORT: String(await freePort()),
      };
      const outcome = await run(process.execPath, [path.join(ROOT, 'deploy', 'local', 'up.js')], {
        env,
        timeout: 60_000,
      }).then(
        ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
        (err: { code?: number; stdout?: string; stderr?: string }) => ({
          code: err.code,
          output: `${err.stdout ?? ''}${err.stderr ?? ''}`,
        }),
      );
      expect(outcome.code).toBe(1);
      expect(outcome.output).toContain(`port ${taken} (gateway admin`);
      expect(outcome.output).toContain('nothing was started');
      expect(outcome.output).not.toContain('Vigil is up');
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it.each([
    [['--replicas', '0'], '--replicas takes a whole number from 1 to 9, not "0"'],
    [['--replicas'], '--replicas takes a whole number from 1 to 9, not nothing'],
    [['--brokers=x'], '--brokers takes a whole number from 1 to 5, not "x"'],
    [['--brokers', '2'], '--brokers 2 cannot lose a node'],
    [['--replica', '2'], 'unknown argument --replica'],
  ])('refuses %j before starting anything, saying why', async (args, message) => {
    const outcome = await run(process.execPath, [path.join(ROOT, 'deploy', 'local', 'up.js'), ...args], {
      timeout: 30_000,
    }).then(
      () => ({ code: 0, output: '' }),
      (err: { code?: number; stderr?: string }) => ({ code: err.code, output: err.stderr ?? '' }),
    );
    expect(outcome.code).toBe(1);
    expect(outcome.output).toContain(message);
    expect(outcome.output).toContain('usage: npm run up');
  });

  it('tells the process listening on a port from another one on it', async () => {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      expect(listensOn(process.pid, port)).toBe(true);
      // Another process (the parent shell of this test run, say) does not hold it.
      expect(listensOn(process.ppid, port)).toBe(false);
      expect(listensOn(process.pid, await freePort())).toBe(false);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('never keeps a PostgreSQL cluster alive past the data folder it belongs to', () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-up-'));
    const dir = path.join(base, '.vigil', 'servers', 'mongo');
    const cluster = dataDirFor(dir);
    try {
      fs.mkdirSync(cluster, { recursive: true });
      fs.writeFileSync(path.join(cluster, 'PG_VERSION'), '17');
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, 'pg-port.json'), '{"port":1}');
      // The folder's own cluster is kept from run to run...
      claimCluster(dir);
      expect(fs.existsSync(path.join(cluster, 'PG_VERSION'))).toBe(true);
      // ...but once the folder is removed (to start afresh), a cluster that lived elsewhere is not taken back.
      fs.rmSync(path.join(base, '.vigil'), { recursive: true, force: true });
      claimCluster(dir);
      expect(fs.existsSync(path.join(cluster, 'PG_VERSION'))).toBe(false);
      // And --reset removes it wherever it lives.
      fs.mkdirSync(cluster, { recursive: true });
      fs.writeFileSync(path.join(cluster, 'PG_VERSION'), '17');
      removeCluster(dir);
      expect(fs.existsSync(cluster)).toBe(false);
    } finally {
      removeCluster(dir);
      fs.rmSync(base, { recursive: true, force: true });
    }
  });

  it('refuses to pair newly generated secrets with data sealed by others', async () => {
    const { mongoUrl } = testServers();
    const dbName = uniqueName('uprun');
    try {
      await checkSecretsMatchData(mongoUrl, dbName, ['key-1', 'appeal-1']);
      await checkSecretsMatchData(mongoUrl, dbName, ['key-1', 'appeal-1']);
      await expect(checkSecretsMatchData(mongoUrl, dbName, ['key-2', 'appeal-2'])).rejects.toBeInstanceOf(StartError);
      await expect(checkSecretsMatchData(mongoUrl, dbName, ['key-2', 'appeal-2'])).rejects.toThrow(/--reset/);
    } finally {
      const client = new MongoClient(mongoUrl);
      await client.db(dbName).dropDatabase();
      await client.close();
    }
  });

  it('lets the admin CLI find the running stack’s store without MONGO_URL, and only while that stack runs', async () => {
    const { mongoUrl } = testServers();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-run-'));
    try {
      const runFile = path.join(dir, 'run.json');
      const mongoDb = uniqueName('admin');
      const note = (pid: number) => fs.writeFileSync(runFile, JSON.stringify({ pid, mongoUrl, mongoDb }));
      const withoutStore = { PATH: process.env.PATH };
      // No note: nothing to add.
      expect(adminEnv(withoutStore, runFile).MONGO_URL).toBeUndefined();
      // A live stack's note: the CLI reaches its store and creates a tenant there.
      note(process.pid);
      const env = adminEnv(withoutStore, runFile);
      expect(env).toMatchObject({ MONGO_URL: mongoUrl, MONGO_DB: mongoDb });
      const cli = path.join(ROOT, 'gateway', 'dist', 'admin', 'cli.js');
      await run(process.execPath, [cli, 'tenant', 'create', 'acme'], { env });
      const client = new MongoClient(mongoUrl);
      try {
        expect(await client.db(mongoDb).collection('tenants').countDocuments({ name: 'acme' })).toBe(1);
      } finally {
        await client.close();
      }
      // MONGO_URL given wins; a note left by a stack that is gone is ignored.
      expect(adminEnv({ MONGO_URL: 'mongodb://elsewhere/' }, runFile).MONGO_URL).toBe('mongodb://elsewhere/');
      const gone = await new Promise<number>((resolve) => {
        const child = spawn(process.execPath, ['-e', '0']);
        child.on('exit', () => resolve(child.pid ?? 0));
      });
      note(gone);
      expect(adminEnv(withoutStore, runFile).MONGO_URL).toBeUndefined();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
