import type { Logger } from 'pino';
import { utcDay } from '../store/report-claims';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Days erased by one pass at most (each an equality delete): ten years, the longest retention, and one more. */
const MAX_DAYS_PER_PASS = 3660;

export interface ContactErasureOptions {
  erase: (day: string) => Promise<number>;
  /** The last day erased by any replica (stored), or undefined before the first. */
  erasedThrough: () => Promise<string | undefined>;
  markErasedThrough: (day: string) => Promise<void>;
  /**
   * Without a stored day: the oldest day the stored contacts are due (giving contacts an earlier release stored
   * without one their day first), or undefined when none is stored.
   */
  oldestDue: () => Promise<string | undefined>;
  log: Logger;
  now?: () => number;
}

/**
 * Erases reporters' emails once the tenant's retention ran out (see ReportContactDoc.eraseDay). It wakes once a UTC
 * day, just after midnight, and deletes by equality each day from the one after the last erased (a stored day shared
 * by the replicas) through today: an idle stack costs one timer and a read a day, no read scans what is not due, and
 * days a stopped moderator missed, however many, are erased when it starts. A failed day is tried again at the next
 * pass. Every replica may run it: a delete by equality twice deletes nothing more.
 */
export class ContactErasure {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(private readonly options: ContactErasureOptions) {}

  start(): void {
    this.running = this.pass();
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private schedule(): void {
    if (this.stopped) return;
    const now = this.now();
    const nextMidnight = Math.floor(now / DAY_MS) * DAY_MS + DAY_MS;
    // A minute past midnight, so that a clock a little behind still names the new day.
    this.timer = setTimeout(
      () => {
        this.running = this.pass().finally(() => this.schedule());
      },
      nextMidnight - now + 60_000,
    );
    this.timer.unref();
  }

  /** Erases the days from the one after the last erased through today, and records how far it got. */
  private async pass(): Promise<void> {
    const { log } = this.options;
    const today = utcDay(new Date(this.now()));
    let from: string | undefined;
    try {
      const through = await this.options.erasedThrough();
      from = through !== undefined ? nextDay(through) : await this.options.oldestDue();
    } catch (err) {
      // Tried again the next day; the read paths' expiry check covers the gap.
      log.warn({ err }, 'reporter email erasure failed');
      return;
    }
    let day = from === undefined || from > today ? today : from;
    for (let n = 0; n < MAX_DAYS_PER_PASS && day <= today && !this.stopped; n += 1, day = nextDay(day)) {
      try {
        const erased = await this.options.erase(day);
        if (erased > 0) log.info({ day, erased }, 'reporter emails erased');
        await this.options.markErasedThrough(day);
      } catch (err) {
        log.warn({ err, day }, 'reporter email erasure failed');
        return;
      }
    }
  }
}

const nextDay = (day: string): string => utcDay(new Date(Date.parse(`${day}T00:00:00Z`) + DAY_MS));
