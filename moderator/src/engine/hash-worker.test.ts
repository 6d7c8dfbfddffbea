import { readFileSync } from 'node:fs';
import path from 'node:path';
import { threadId } from 'node:worker_threads';
import { imageHashes, type ImageHashes } from './images/image-hashes';
import { OffLoopPool, workerFile } from './off-loop';

// The pool runs the built worker module (dist/engine/hash-worker.js): `npm run build` first.

const photo = readFileSync(path.join(__dirname, 'images', 'pdq', 'fixtures', 'photos', 'bridge-mods', 'aaa-orig.jpg'));
const task = { bytes: photo, maxPixels: 20_000_000 };
const budget = { budgetMs: 60_000 };
const finished: Array<{ name: string; outcome: string }> = [];
const pool = new OffLoopPool({
  filename: workerFile('hash-worker'),
  threads: 1,
  tenantThreads: 1,
  maxQueuedPerTenant: 10,
  onTask: (name, _seconds, outcome) => finished.push({ name, outcome }),
});

afterAll(() => pool.close());

describe('hash worker', () => {
  it('hashes in a worker thread: the call returns a promise the worker resolves, with the in-process result', async () => {
    const running = pool.run<ImageHashes>('tenant-a', 'hash', task, budget);
    expect(running).toBeInstanceOf(Promise);
    const outcome = await running;
    expect(outcome).toEqual({ ok: true, value: await imageHashes(photo, task) });
    // The reference's hash of this photo (fixtures/reference.json).
    expect(outcome.ok && outcome.value.pdq).toEqual({
      hash: 'd8f8f0cee0f4a84f0637022a078f67f0b36e2ed596621e1d33e6339c4e9c9b22',
      quality: 100,
    });
    expect(finished).toContainEqual({ name: 'hash', outcome: 'ok' });
    const where = await pool.run<{ threadId: number; isMainThread: boolean }>('tenant-a', 'thread', {}, budget);
    expect(where).toEqual({ ok: true, value: { threadId: expect.any(Number), isMainThread: false } });
    expect(where.ok && where.value.threadId).not.toBe(threadId);
  });

  it('leaves the event loop free while hashing', async () => {
    let turns = 0;
    let done = false;
    const running = pool.run<ImageHashes>('tenant-a', 'hash', task, budget).finally(() => {
      done = true;
    });
    // Event-loop turns taken while the hash runs. Hashing on this thread, inside the call, would leave none: the
    // promise would settle before the first turn.
    const spin = () => {
      if (done) return;
      turns++;
      setImmediate(spin);
    };
    setImmediate(spin);
    expect((await running).ok).toBe(true);
    expect(turns).toBeGreaterThan(0);
  });

  /** A pool of one hash thread that starts it with its first task. */
  const lazyPool = () =>
    new OffLoopPool({
      filename: workerFile('hash-worker'),
      threads: 1,
      tenantThreads: 1,
      maxQueuedPerTenant: 10,
      lazy: true,
    });

  it('starts the threads of a lazy pool with its first task, not before', async () => {
    const lazy = lazyPool();
    try {
      expect(lazy.started).toBe(false);
      const where = await lazy.run<{ threadId: number; isMainThread: boolean }>('tenant-a', 'thread', {}, budget);
      expect(lazy.started).toBe(true);
      expect(where).toEqual({ ok: true, value: { threadId: expect.any(Number), isMainThread: false } });
    } finally {
      await lazy.close();
    }
  });

  it('closes a lazy pool that never had a task without starting its threads', async () => {
    const lazy = lazyPool();
    await lazy.close();
    expect(lazy.started).toBe(false);
    await expect(lazy.run('tenant-a', 'thread', {}, budget)).rejects.toThrow('off-loop pool closed');
  });
});
