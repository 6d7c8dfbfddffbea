import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { TenantBusyError } from '../../domain/errors';
import type { OffLoopOutcome } from '../off-loop';
import type { OcrPriority, OcrProcessOptions, OcrReply, OcrRequest } from './ocr-process';
import type { ReadResult } from './read-text';
import { TextFirst, type TextFirstOptions } from './text-first';

export interface OcrPoolOptions {
  /** OCR processes, started at once and kept; each reads one image at a time. */
  processes: number;
  /** Readings one tenant may have waiting; more are refused with TenantBusyError. */
  maxQueuedPerTenant: number;
  /**
   * The processes' threads: `idle` under SCHED_IDLE (Linux, `chrt`; nice 19 where it cannot be set), `nice` at nice 19,
   * `normal` as the moderator's (benchmarks of the reading alone).
   */
  priority: OcrPriority;
  /** The process's module (compiled JavaScript); by default ocr-process.js of the build. */
  filename?: string;
  /** Each finished reading: seconds spent reading (not waiting), and how it ended. */
  onTask?: (seconds: number, outcome: 'ok' | 'budget' | 'error') => void;
  /** A process ended other than by close: its exit code or signal (a reading over its budget is SIGKILLed). */
  onExit?: (exit: { code: number | null; signal: NodeJS.Signals | null }) => void;
  /**
   * Text first: the processes reading are stopped while text-only moderations are in flight (see TextFirst). Ignored
   * on Windows, which has no SIGSTOP.
   */
  textFirst?: TextFirstOptions;
}

export interface ReadOptions {
  /**
   * CPU time allowed for the reading (the process's, where Linux's /proc tells it; else wall time), milliseconds.
   * Waiting for a process does not count. A reading also ends after 4 budgets of wall time.
   */
  budgetMs: number;
  /**
   * The caller's deadline: a reading still waiting is dropped (the caller rejected with the signal's reason); a
   * running one finishes within its budget.
   */
  signal?: AbortSignal;
}

export interface ReadTask {
  bytes: Uint8Array;
  /** Decoded pixels at most: an image whose header announces more is refused before it is decoded. */
  maxPixels: number;
}

interface Job extends ReadOptions {
  tenantId: string;
  task: ReadTask;
  resolve: (outcome: OffLoopOutcome<ReadResult>) => void;
  reject: (err: unknown) => void;
  onAbort?: () => void;
}

/** One OCR process: whether it said it is ready, and the reading it runs. */
interface Slot {
  child: ChildProcess;
  /** Ready for a reading: loaded, and not being stopped. */
  ready: boolean;
  /** It was ready once (a process that ends before is started again after a pause). */
  started: boolean;
  /** The reading it runs: `pausedAtStart` is TextFirst's paused time when it started, milliseconds. */
  running?: { id: number; job: Job; timer: NodeJS.Timeout; startedAt: bigint; pausedAtStart: number };
}

/** How often a running reading's CPU time is compared with its budget, milliseconds. */
const BUDGET_CHECK_MS = 100;

/** A reading ends when its wall time (less its pauses for text) reaches this many budgets, however little CPU it got. */
const STARVED_BUDGETS = 4;

/** A process that ends this soon after it started, before it was ready, is started again only after a pause. */
const RESTART_PAUSE_MS = 1000;

/**
 * Reads the text in images (OCR) in child processes of their own, each one image at a time, fairly across tenants
 * and within a time budget per image. A process's threads all run under SCHED_IDLE (see lowerPriority): the reading,
 * and also the work a thread of the moderator would share with text moderation at normal priority (sharp's and
 * libvips' threads, V8's garbage collection and WebAssembly compilation). Its memory (tesseract's WebAssembly memory
 * and model: 290-405 MB resident at its peak over the labelled set) is its own, outside the moderator's.
 * - tenants take turns (round robin over per-tenant queues, each bounded);
 * - a reading whose process spent its budget of CPU time on it (or that waited 4 budgets, starved, not counting its
 *   pauses for text) is stopped with its process (SIGKILL), which starts again; the caller gets
 *   `{ ok: false, reason: 'budget' }`;
 * - with `textFirst`, the processes reading are stopped while text-only moderations are in flight (TextFirst);
 * - readings wait for a ready process: one that is starting or starting again loads the model first.
 */
export class OcrPool {
  private readonly slots: Slot[] = [];
  private readonly queues = new Map<string, Job[]>();
  private readonly waitingReady: (() => void)[] = [];
  private nextId = 0;
  private lastServed?: string;
  private closed = false;
  private readonly textFirst?: TextFirst;
  /** The scheduling each process reported when ready: `idle`, `nice` or `unchanged`. */
  readonly scheduling: string[] = [];

  constructor(private readonly options: OcrPoolOptions) {
    if (options.textFirst && process.platform !== 'win32') this.textFirst = new TextFirst(options.textFirst);
    for (let index = 0; index < options.processes; index += 1) this.slots.push(this.spawn(index));
  }

  /** Process ids of the running OCR processes (for measuring them). */
  get pids(): number[] {
    return this.slots.flatMap((slot) => (slot.child.pid === undefined ? [] : [slot.child.pid]));
  }

  /** Resolves once every process loaded the model and read once (readiness waits for it). */
  ready(): Promise<void> {
    if (this.allReady()) return Promise.resolve();
    return new Promise((resolve) => this.waitingReady.push(resolve));
  }

  /**
   * Reads the text in one image for `tenantId` within `options.budgetMs` of CPU time. Rejects when the signal
   * aborts first (with its reason), when the tenant's queue is full, or when the process failed or died reading.
   */
  read(tenantId: string, task: ReadTask, options: ReadOptions): Promise<OffLoopOutcome<ReadResult>> {
    const { signal } = options;
    if (this.closed) return Promise.reject(new Error('OCR pool closed'));
    signal?.throwIfAborted();
    const queue = this.queues.get(tenantId) ?? [];
    if (queue.length >= this.options.maxQueuedPerTenant) return Promise.reject(new TenantBusyError());
    return new Promise((resolve, reject) => {
      const job: Job = { ...options, tenantId, task, resolve, reject };
      if (signal) {
        job.onAbort = () => {
          const waiting = this.queues.get(tenantId);
          const index = waiting?.indexOf(job) ?? -1;
          if (!waiting || index === -1) return;
          waiting.splice(index, 1);
          if (waiting.length === 0) this.queues.delete(tenantId);
          reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
        };
        signal.addEventListener('abort', job.onAbort, { once: true });
      }
      queue.push(job);
      this.queues.set(tenantId, queue);
      this.dispatch();
    });
  }

  /** Whether the processes reading are stopped for text now. */
  get paused(): boolean {
    return this.textFirst?.paused ?? false;
  }

  /** Refuses waiting readings, and ends the processes (a running reading is refused too). */
  async close(): Promise<void> {
    this.closed = true;
    // A stopped process would not see its channel close.
    this.textFirst?.close();
    for (const queue of this.queues.values()) {
      for (const job of queue) job.reject(new Error('OCR pool closed'));
    }
    this.queues.clear();
    for (const resolve of this.waitingReady.splice(0)) resolve();
    await Promise.all(
      this.slots.map(async (slot) => {
        const running = slot.running;
        if (running) {
          clearInterval(running.timer);
          slot.running = undefined;
          running.job.reject(new Error('OCR pool closed'));
        }
        await stop(slot.child);
      }),
    );
  }

  private allReady(): boolean {
    return this.slots.every((slot) => slot.ready);
  }

  private spawn(index: number): Slot {
    const args: OcrProcessOptions = { priority: this.options.priority };
    // Only PATH (for `chrt`): none of the moderator's secrets. Two malloc arenas: libvips allocates from several
    // threads, and glibc's arena per thread kept freed image buffers resident. No output: the service's is its logs.
    const child = fork(this.options.filename ?? ocrProcessFile(), [JSON.stringify(args)], {
      execArgv: [],
      env: { PATH: process.env.PATH ?? '', MALLOC_ARENA_MAX: '2' },
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
    const slot: Slot = { child, ready: false, started: false };
    const startedAt = Date.now();
    child.on('message', (reply: OcrReply) => this.onReply(slot, reply));
    // An error (the process could not start or be signalled) is followed by its exit, which starts it again.
    child.on('error', () => undefined);
    child.on('exit', (code, signal) => {
      const running = slot.running;
      slot.running = undefined;
      slot.ready = false;
      if (this.closed) return;
      this.options.onExit?.({ code, signal });
      if (running) {
        clearInterval(running.timer);
        this.readersChanged();
        this.options.onTask?.(this.readingSeconds(running), 'error');
        running.job.reject(new Error(`OCR process ended (${signal ?? code ?? 'unknown'})`));
      }
      const restart = () => {
        if (this.closed) return;
        this.slots[index] = this.spawn(index);
      };
      if (!slot.started && Date.now() - startedAt < RESTART_PAUSE_MS) setTimeout(restart, RESTART_PAUSE_MS).unref();
      else restart();
    });
    return slot;
  }

  private onReply(slot: Slot, reply: OcrReply): void {
    if (reply.type === 'ready') {
      slot.ready = true;
      slot.started = true;
      this.scheduling[this.slots.indexOf(slot)] = reply.scheduling;
      if (this.allReady()) for (const resolve of this.waitingReady.splice(0)) resolve();
      this.dispatch();
      return;
    }
    const running = slot.running;
    if (!running || running.id !== reply.id) return;
    clearInterval(running.timer);
    slot.running = undefined;
    this.readersChanged();
    if (reply.type === 'result') {
      this.options.onTask?.(this.readingSeconds(running), 'ok');
      running.job.resolve({ ok: true, value: reply.result });
    } else {
      this.options.onTask?.(this.readingSeconds(running), 'error');
      running.job.reject(new Error(reply.message));
    }
    this.dispatch();
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (this.closed || !slot.ready || slot.running || !slot.child.connected) continue;
      const job = this.nextJob();
      if (!job) return;
      this.start(slot, job);
    }
  }

  /**
   * The first queued reading of the tenant in turn, which then goes last. The tenant served last waits for the others'
   * turn even when its queue was empty in between (a tenant's queue is dropped when empty, and made anew at the end).
   */
  private nextJob(): Job | undefined {
    let chosen: string | undefined;
    for (const tenantId of this.queues.keys()) {
      chosen ??= tenantId;
      if (tenantId !== this.lastServed) {
        chosen = tenantId;
        break;
      }
    }
    if (chosen === undefined) return undefined;
    const queue = this.queues.get(chosen) ?? [];
    const job = queue.shift();
    this.queues.delete(chosen);
    if (queue.length > 0) this.queues.set(chosen, queue);
    this.lastServed = chosen;
    return job;
  }

  /** Tells TextFirst which processes run a reading now. */
  private readersChanged(): void {
    this.textFirst?.setReaders(
      this.slots.flatMap((slot) => (slot.running && slot.child.pid !== undefined ? [slot.child.pid] : [])),
    );
  }

  /** Seconds a reading has run, not counting its pauses for text. */
  private readingSeconds(running: { startedAt: bigint; pausedAtStart: number }): number {
    const pausedMs = (this.textFirst?.pausedMs() ?? 0) - running.pausedAtStart;
    return Math.max(0, secondsSince(running.startedAt) - pausedMs / 1000);
  }

  private start(slot: Slot, job: Job): void {
    if (job.onAbort) job.signal?.removeEventListener('abort', job.onAbort);
    this.nextId += 1;
    const id = this.nextId;
    const startedAt = process.hrtime.bigint();
    const pausedAtStart = this.textFirst?.pausedMs() ?? 0;
    const pid = slot.child.pid;
    const cpuAtStart = pid === undefined ? undefined : cpuMsOf(pid);
    const overBudget = () => {
      if (slot.running?.id !== id) return;
      const running = slot.running;
      slot.running = undefined;
      clearInterval(timer);
      // Nothing more is sent to it; its exit starts it again, and readings wait for the new one to be ready.
      slot.ready = false;
      this.options.onTask?.(this.readingSeconds(running), 'budget');
      job.resolve({ ok: false, reason: 'budget' });
      // SIGKILL ends a stopped process too.
      slot.child.kill('SIGKILL');
      this.readersChanged();
    };
    // The budget is the process's CPU time (Linux): under SCHED_IDLE a reading waits whenever other work wants the
    // cores, and that wait is not its cost. A reading starved for STARVED_BUDGETS budgets of wall time ends too; its
    // pauses for text do not count (a stopped process spends no CPU time, so they never count in the budget).
    const timer = setInterval(
      () => {
        const pausedMs = (this.textFirst?.pausedMs() ?? 0) - pausedAtStart;
        const wallMs = secondsSince(startedAt) * 1000 - pausedMs;
        const cpuNow = pid === undefined || cpuAtStart === undefined ? undefined : cpuMsOf(pid);
        const spentMs = cpuNow === undefined || cpuAtStart === undefined ? wallMs : cpuNow - cpuAtStart;
        if (spentMs > job.budgetMs || wallMs > job.budgetMs * STARVED_BUDGETS) overBudget();
      },
      Math.min(BUDGET_CHECK_MS, job.budgetMs),
    );
    slot.running = { id, job, timer, startedAt, pausedAtStart };
    this.readersChanged();
    const request: OcrRequest = { type: 'read', id, bytes: job.task.bytes, maxPixels: job.task.maxPixels };
    slot.child.send(request);
  }
}

/**
 * CPU time a process and its threads used so far (user and system, Linux /proc: clock ticks of 10 ms), milliseconds;
 * undefined where it cannot be read.
 */
function cpuMsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * 10 : undefined;
  } catch {
    return undefined;
  }
}

function secondsSince(startedAt: bigint): number {
  return Number(process.hrtime.bigint() - startedAt) / 1e9;
}

/** Ends a process: its IPC channel closed (it exits), then SIGKILL if it is still there after a while. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  if (child.connected) child.disconnect();
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

/**
 * The compiled OCR process module next to this one. Under ts-jest/swc (tests run the TypeScript sources) it is the
 * build's copy in dist/, so tests that read text need `npm run build` first, as for the worker threads.
 */
function ocrProcessFile(): string {
  const here = path.join(__dirname, 'ocr-process.js');
  if (existsSync(here)) return here;
  return path.resolve(__dirname, '../../../dist/engine/images/ocr-process.js');
}
