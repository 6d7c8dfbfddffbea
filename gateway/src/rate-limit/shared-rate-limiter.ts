import { Counter, type Registry } from 'prom-client';
import type { Logger } from 'pino';
import { WindowCounter, type Limit, type Verdict, type WindowCount } from './window-counter';

/** Where instances leave their counts and read the others' (`RateLimitStore` in production). */
export interface CountsExchange {
  publish(instanceId: string, counts: WindowCount[], now: number): Promise<void>;
  othersCounts(instanceId: string, now: number): Promise<WindowCount[]>;
  deleteExpired(now: number): Promise<void>;
}

export interface SharedRateLimiterOptions {
  /** Unique per process: names this instance's document. */
  instanceId: string;
  /** Time between two exchanges with the store, milliseconds (`RATE_LIMIT_SYNC_MS`). */
  syncIntervalMs: number;
  /** Most slot counts one report carries (bounds the document; the largest go first). Default 50,000. */
  maxReportedWindows?: number;
  now?: () => number;
}

/** Counts unchanged since the last report are written again after this long, in case a sweep removed them. */
const REPUBLISH_MS = 5_000;
/** How often an instance sweeps the documents of stopped instances. */
const SWEEP_MS = 30_000;
/**
 * With no request for IDLE_AFTER_MS, the exchanges slow to one per IDLE_SYNC_MS (an idle gateway then reads the store
 * once per 5 s, not four times a second); the first request after that brings the next exchange at the usual pace,
 * and is itself decided on the counts last read.
 */
const IDLE_AFTER_MS = 10_000;
const IDLE_SYNC_MS = 5_000;

/**
 * The per-key rate limit held across gateway replicas. Requests are decided in memory (`consume`, no store round trip);
 * every `syncIntervalMs` this instance writes its own counts to the store and reads the sum of the other instances'
 * (see `WindowCounter`). While the store is out of reach it keeps deciding on its own counts plus the last ones it
 * read, and logs the outage once.
 */
export class SharedRateLimiter {
  private readonly counter = new WindowCounter();
  private readonly now: () => number;
  private readonly syncs: Counter<'outcome'>;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private publishedVersion = 0;
  private publishedAt = Number.NEGATIVE_INFINITY;
  private sweptAt = Number.NEGATIVE_INFINITY;
  private failing = false;
  private lastRequestAt = Number.NEGATIVE_INFINITY;
  /** The pending exchange was scheduled at the idle pace. */
  private idleWait = false;

  constructor(
    private readonly exchange: CountsExchange,
    private readonly log: Logger,
    private readonly options: SharedRateLimiterOptions,
    registry?: Registry,
  ) {
    this.now = options.now ?? Date.now;
    this.syncs = new Counter({
      name: 'gateway_rate_limit_syncs_total',
      help: 'Exchanges of rate limit counts with the store, by outcome (ok, error).',
      labelNames: ['outcome'],
      registers: registry ? [registry] : [],
    });
  }

  consume(key: string, limit: Limit): Verdict {
    const now = this.now();
    this.lastRequestAt = now;
    if (this.idleWait) this.wake();
    return this.counter.consume(key, limit, now);
  }

  /** Starts exchanging counts every `syncIntervalMs` (every IDLE_SYNC_MS while no request comes). */
  start(): void {
    this.stopped = false;
    this.lastRequestAt = this.now();
    this.schedule();
  }

  /** A request after an idle spell: the next exchange comes at the usual pace. */
  private wake(): void {
    this.idleWait = false;
    // A running exchange schedules the next one itself when it ends.
    if (this.stopped || this.running) return;
    clearTimeout(this.timer);
    this.schedule();
  }

  /** Stops the exchanges after a last one, so the others keep counting what this instance admitted. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await this.sync();
  }

  /** One exchange: write this instance's counts (when they moved), read the others'. Never throws. */
  async sync(): Promise<void> {
    const now = this.now();
    try {
      const version = this.counter.version;
      const counts = this.counter.report(now, this.options.maxReportedWindows ?? 50_000);
      if (counts.length > 0 && (version !== this.publishedVersion || now - this.publishedAt >= REPUBLISH_MS)) {
        await this.exchange.publish(this.options.instanceId, counts, now);
        this.publishedVersion = version;
        this.publishedAt = now;
      }
      this.counter.absorb(await this.exchange.othersCounts(this.options.instanceId, now), this.now());
      if (now - this.sweptAt >= SWEEP_MS) {
        this.sweptAt = now;
        await this.exchange.deleteExpired(now);
      }
      this.syncs.inc({ outcome: 'ok' });
      if (this.failing) this.log.info('rate limit counts exchanged again');
      this.failing = false;
    } catch (err) {
      this.syncs.inc({ outcome: 'error' });
      if (!this.failing) this.log.warn({ err }, 'rate limit counts not exchanged; limiting on the last ones read');
      this.failing = true;
    }
  }

  private schedule(): void {
    if (this.stopped) return;
    this.idleWait = this.now() - this.lastRequestAt >= IDLE_AFTER_MS;
    const delay = this.idleWait ? Math.max(IDLE_SYNC_MS, this.options.syncIntervalMs) : this.options.syncIntervalMs;
    this.timer = setTimeout(() => {
      this.running = this.sync().finally(() => {
        this.running = undefined;
        this.schedule();
      });
    }, delay);
    this.timer.unref();
  }
}
