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
  /** Time between two exchanges at the relaxed pace, milliseconds (`RATE_LIMIT_RELAXED_SYNC_MS`). Default 5000. */
  relaxedSyncMs?: number;
  /** Most slot counts one report carries (bounds the document; the largest go first). Default 50,000. */
  maxReportedWindows?: number;
  now?: () => number;
}

/** Counts unchanged since the last report are written again after this long, in case a sweep removed them. */
const REPUBLISH_MS = 5_000;
/** How often an instance sweeps the documents of stopped instances. */
const SWEEP_MS = 30_000;
/**
 * The relaxed pace (default): while no key moved by UNSEEN_SHARE of its limit since the last exchange nor stands at
 * NEAR_SHARE of it (`WindowCounter.exchangeDue`), counts are exchanged once per RELAXED_SYNC_MS. A quiet or lightly
 * used gateway then reads the store once per 5 s, not four times a second; a request that makes an exchange due brings
 * it at once.
 */
const RELAXED_SYNC_MS = 5_000;

/**
 * The per-key rate limit held across gateway replicas. Requests are decided in memory (`consume`, no store round trip);
 * this instance writes its own counts to the store and reads the sum of the other instances' (see `WindowCounter`)
 * every `syncIntervalMs` while a key is busy, and every `relaxedSyncMs` otherwise. So the instances together admit at
 * most the limit plus, for each other instance, 1 % of the limit (UNSEEN_SHARE) or what it admitted in its last
 * `syncIntervalMs`. While the store is out of reach it keeps deciding on its own counts plus the last ones it read,
 * and logs the outage once.
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
  /** The pending exchange was scheduled at the relaxed pace. */
  private relaxedWait = false;

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
    const verdict = this.counter.consume(key, limit, this.now());
    if (this.relaxedWait && this.counter.exchangeDue) this.wake();
    return verdict;
  }

  /** Starts exchanging counts (every `syncIntervalMs` while one is due, else every `relaxedSyncMs`). */
  start(): void {
    this.stopped = false;
    this.schedule();
  }

  /** A request made an exchange due while the pending one waits at the relaxed pace: it comes at the usual pace. */
  private wake(): void {
    this.relaxedWait = false;
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
    this.relaxedWait = !this.counter.exchangeDue;
    const delay = this.relaxedWait
      ? Math.max(this.options.relaxedSyncMs ?? RELAXED_SYNC_MS, this.options.syncIntervalMs)
      : this.options.syncIntervalMs;
    this.timer = setTimeout(() => {
      this.running = this.sync().finally(() => {
        this.running = undefined;
        this.schedule();
      });
    }, delay);
    this.timer.unref();
  }
}
