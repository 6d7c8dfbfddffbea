import type { Logger } from 'pino';
import { utcDay } from './report-claims';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Days looked back on start: erasures a stopped moderator missed (each one an equality delete). */
const CATCH_UP_DAYS = 7;

export interface ContactErasureOptions {
  erase: (day: string) => Promise<number>;
  log: Logger;
  now?: () => number;
}

/**
 * Erases reporters' emails once the tenant's retention ran out (see ReportContactDoc.eraseDay). It wakes once a UTC
 * day, just after midnight, and deletes that day's contacts by equality: an idle stack costs one timer a day, and no
 * read scans what is not due. On start it also erases the last few days, which a stopped moderator missed. Every
 * replica may run it: a delete by equality twice deletes nothing more.
 */
export class ContactErasure {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(private readonly options: ContactErasureOptions) {}

  start(): void {
    const now = this.now();
    const days = Array.from({ length: CATCH_UP_DAYS }, (_, i) =>
      utcDay(new Date(now - (CATCH_UP_DAYS - 1 - i) * DAY_MS)),
    );
    this.running = this.sweep(days);
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
        this.running = this.sweep([utcDay(new Date(this.now()))]).finally(() => this.schedule());
      },
      nextMidnight - now + 60_000,
    );
    this.timer.unref();
  }

  private async sweep(days: string[]): Promise<void> {
    for (const day of days) {
      if (this.stopped) return;
      try {
        const erased = await this.options.erase(day);
        if (erased > 0) this.options.log.info({ day, erased }, 'reporter emails erased');
      } catch (err) {
        // Tried again the next day: the catch-up on start and the read paths' expiry check cover the gap.
        this.options.log.warn({ err, day }, 'reporter email erasure failed');
      }
    }
  }
}
