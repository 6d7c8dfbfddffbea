import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Piscina } from 'piscina';
import { TenantBusyError } from '../domain/errors';
import type { ActivityGate } from './activity-gate';

/** What became of a task: its value, or the time budget ran out (the worker running it was stopped). */
export type OffLoopOutcome<T> = { ok: true; value: T } | { ok: false; reason: 'budget' };

export interface OffLoopOptions {
  /** The worker module (compiled JavaScript); see workerFile. */
  filename: string;
  /** Worker threads, created at start (or at the first task, with `lazy`) and kept. */
  threads: number;
  /**
   * The threads start with the first task rather than with the pool: for work most deployments never ask for (image
   * hashing), whose threads would otherwise hold memory (a worker thread and its modules, 20-30 MB) for nothing.
   */
  lazy?: boolean;
  /** Threads one tenant may hold at once; the rest stay free for the others. */
  tenantThreads: number;
  /** Tasks one tenant may have waiting; more are refused with TenantBusyError. */
  maxQueuedPerTenant: number;
  workerData?: unknown;
  /** Added to the threads' nice value (Linux): a positive number lets the rest of the process run first. */
  niceIncrement?: number;
  /** Each finished task: its name, seconds spent running (not waiting), and how it ended. */
  onTask?: (name: string, seconds: number, outcome: 'ok' | 'budget' | 'error') => void;
  /**
   * Work of a higher priority: while the gate is busy, a task waits to start until it is not, at most `maxDelayMs`
   * (then it starts anyway, so that this pool's work keeps going under a steady stream of the other).
   */
  yieldTo?: { gate: ActivityGate; maxDelayMs: number };
}

export interface RunOptions {
  /** Running time allowed (waiting for a thread does not count), milliseconds. */
  budgetMs: number;
  /**
   * The caller's deadline: a task still waiting is dropped (the caller rejected with the signal's reason); a running
   * one finishes within its budget (stopping it would cost a new worker, which compiles its rule sets again).
   */
  signal?: AbortSignal;
  /** At the head of the tenant's queue (the second trip of a task already started: it keeps its place). */
  first?: boolean;
  /** Buffers moved to the worker rather than copied (unusable here afterwards). */
  transferList?: ArrayBuffer[];
}

interface Job extends RunOptions {
  tenantId: string;
  name: string;
  task: unknown;
  resolve: (outcome: OffLoopOutcome<unknown>) => void;
  reject: (err: unknown) => void;
  onAbort?: () => void;
}

/**
 * The time budget of one task, as piscina takes an abort signal (an emitter of `abort` with `aborted`): piscina stops
 * the task's worker when it fires. An AbortController's signal, an EventTarget, cost about 25 µs a task to make, listen
 * to and release on Node 20; this emitter about 3 µs, and every record's checks are a task.
 */
class TaskBudget extends EventEmitter {
  aborted = false;

  exceed(): void {
    this.aborted = true;
    this.emit('abort');
  }
}

/**
 * CPU work run off the main event loop, in a pool of worker threads (piscina), fairly across tenants and under a
 * time budget per task, so that no tenant's rules, content or images stall the service for the others:
 * - tenants take turns (round robin over per-tenant queues), and one tenant holds at most `tenantThreads` threads
 *   (by default all but one), so another tenant's task waits for at most one task, not for the noisy tenant's queue;
 * - a task still running when its budget ends is stopped by terminating its worker (piscina replaces it), which is
 *   the only way to stop synchronous JavaScript; the caller gets `{ ok: false, reason: 'budget' }` and decides.
 * Only as many tasks as there are threads are handed to piscina, so its own queue stays empty and the order is ours.
 */
export class OffLoopPool {
  private piscina?: Piscina;
  private readonly queues = new Map<string, Job[]>();
  private readonly runningByTenant = new Map<string, number>();
  private running = 0;
  private closed = false;
  /** While tasks wait for the `yieldTo` gate: since when, and the timer and listener that end the wait. */
  private yielding?: { since: number; timer: NodeJS.Timeout; cancel: () => void };

  constructor(private readonly options: OffLoopOptions) {
    if (!options.lazy) this.piscina = this.createPiscina();
  }

  private createPiscina(): Piscina {
    const { options } = this;
    return new Piscina({
      filename: options.filename,
      minThreads: options.threads,
      maxThreads: options.threads,
      idleTimeout: Number.POSITIVE_INFINITY,
      concurrentTasksPerWorker: 1,
      workerData: options.workerData,
      niceIncrement: options.niceIncrement ?? 0,
    });
  }

  /** The worker threads, started here on the first task of a lazy pool. */
  private get pool(): Piscina {
    this.piscina ??= this.createPiscina();
    return this.piscina;
  }

  /** Whether the worker threads run (always, unless the pool is lazy and has had no task yet). */
  get started(): boolean {
    return this.piscina !== undefined;
  }

  get threads(): number {
    return this.options.threads;
  }

  /** Tasks waiting for a thread, all tenants. */
  get queued(): number {
    let count = 0;
    for (const queue of this.queues.values()) count += queue.length;
    return count;
  }

  /**
   * Runs the worker's export `name` on `task` for `tenantId` within `options.budgetMs` of running time. Rejects when
   * the signal aborts first (with its reason), when the tenant's queue is full, or when the task throws.
   */
  run<T>(tenantId: string, name: string, task: unknown, options: RunOptions): Promise<OffLoopOutcome<T>> {
    const { signal, first = false } = options;
    if (this.closed) return Promise.reject(new Error('off-loop pool closed'));
    signal?.throwIfAborted();
    const queue = this.queues.get(tenantId) ?? [];
    if (!first && queue.length >= this.options.maxQueuedPerTenant) return Promise.reject(new TenantBusyError());
    return new Promise<OffLoopOutcome<T>>((resolve, reject) => {
      const job: Job = {
        ...options,
        tenantId,
        name,
        task,
        resolve: resolve as (outcome: OffLoopOutcome<unknown>) => void,
        reject,
      };
      if (signal) {
        job.onAbort = () => {
          const waiting = this.queues.get(tenantId);
          const index = waiting?.indexOf(job) ?? -1;
          if (waiting && index !== -1) {
            waiting.splice(index, 1);
            if (waiting.length === 0) this.queues.delete(tenantId);
            reject(asError(signal.reason));
          }
        };
        signal.addEventListener('abort', job.onAbort, { once: true });
      }
      if (first) queue.unshift(job);
      else queue.push(job);
      this.queues.set(tenantId, queue);
      this.dispatch();
    });
  }

  /** Waits for running tasks, then stops the workers; waiting tasks are refused. */
  async close(): Promise<void> {
    this.closed = true;
    this.stopYielding();
    for (const queue of this.queues.values()) {
      for (const job of queue) job.reject(new Error('off-loop pool closed'));
    }
    this.queues.clear();
    await this.piscina?.close();
  }

  private dispatch(): void {
    if (this.yields()) return;
    while (this.running < this.options.threads) {
      const job = this.nextJob();
      if (!job) return;
      this.start(job);
    }
  }

  /**
   * Whether the next start waits for the `yieldTo` gate: a thread is free and a task waits, the gate is busy, and the
   * wait has not reached its bound. The gate going idle, or the bound, dispatches again.
   */
  private yields(): boolean {
    const yieldTo = this.options.yieldTo;
    if (this.closed || !yieldTo || !yieldTo.gate.busy || this.running >= this.options.threads || this.queued === 0) {
      this.stopYielding();
      return false;
    }
    const now = Date.now();
    if (this.yielding) {
      if (now - this.yielding.since < yieldTo.maxDelayMs) return true;
      this.stopYielding();
      return false;
    }
    if (yieldTo.maxDelayMs <= 0) return false;
    const resume = () => {
      this.stopYielding();
      this.dispatch();
    };
    this.yielding = {
      since: now,
      timer: setTimeout(() => {
        if (this.yielding) this.yielding.since = Number.NEGATIVE_INFINITY;
        this.dispatch();
      }, yieldTo.maxDelayMs),
      cancel: yieldTo.gate.onceIdle(resume),
    };
    return true;
  }

  private stopYielding(): void {
    if (!this.yielding) return;
    clearTimeout(this.yielding.timer);
    this.yielding.cancel();
    this.yielding = undefined;
  }

  /** The first queued job of the first tenant in turn that may take one more thread; that tenant goes last. */
  private nextJob(): Job | undefined {
    for (const [tenantId, queue] of this.queues) {
      if ((this.runningByTenant.get(tenantId) ?? 0) >= this.options.tenantThreads) continue;
      const job = queue.shift();
      this.queues.delete(tenantId);
      if (queue.length > 0) this.queues.set(tenantId, queue);
      return job;
    }
    return undefined;
  }

  private start(job: Job): void {
    if (job.onAbort) job.signal?.removeEventListener('abort', job.onAbort);
    this.running += 1;
    this.runningByTenant.set(job.tenantId, (this.runningByTenant.get(job.tenantId) ?? 0) + 1);
    const budget = new TaskBudget();
    const timer = setTimeout(() => budget.exceed(), job.budgetMs);
    const startedAt = process.hrtime.bigint();

    const finish = (outcome: 'ok' | 'budget' | 'error') => {
      clearTimeout(timer);
      this.running -= 1;
      const held = (this.runningByTenant.get(job.tenantId) ?? 1) - 1;
      if (held > 0) this.runningByTenant.set(job.tenantId, held);
      else this.runningByTenant.delete(job.tenantId);
      this.options.onTask?.(job.name, Number(process.hrtime.bigint() - startedAt) / 1e9, outcome);
      this.dispatch();
    };

    this.pool.run(job.task, { name: job.name, signal: budget, transferList: job.transferList }).then(
      (value: unknown) => {
        finish('ok');
        job.resolve({ ok: true, value });
      },
      (err: unknown) => {
        if (budget.aborted) {
          finish('budget');
          job.resolve({ ok: false, reason: 'budget' });
        } else {
          finish('error');
          job.reject(err);
        }
      },
    );
  }
}

function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error('aborted');
}

/**
 * The compiled worker module next to this one. Under ts-jest/swc (tests run the TypeScript sources) it is the
 * build's copy in dist/, so tests that start workers need `npm run build` first, as integration tests already do.
 */
export function workerFile(name: string): string {
  const here = path.join(__dirname, `${name}.js`);
  if (existsSync(here)) return here;
  return path.resolve(__dirname, '../../dist/engine', `${name}.js`);
}
