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
    return this.counter.consume(key, limit, this.now());
  }

  /** Starts exchanging counts every `syncIntervalMs`. */
  start(): void {
    this.stopped = false;
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
    this.timer = setTimeout(() => {
      this.running = this.sync().finally(() => {
        this.running = undefined;
        this.schedule();
      });
    }, this.options.syncIntervalMs);
    this.timer.unref();
  }
}
