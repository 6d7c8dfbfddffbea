import type { ActivityGate } from '../activity-gate';

/** Why a pause ended: text moderation left (after the linger), the share cap, no reading left to pause, or close. */
export type PauseEnd = 'text_idle' | 'share_cap' | 'no_reading' | 'closed';

export interface TextFirstOptions {
  /** Text-only moderations in flight: OCR is paused while any is. */
  gate: Pick<ActivityGate, 'busy' | 'onChange'>;
  /** How long a pause lasts after the last text-only moderation left, milliseconds: the next one often comes sooner. */
  lingerMs: number;
  /** Paused time allowed in each window of `windowMs`, milliseconds; OCR runs for the rest of the window. */
  maxPausedMs: number;
  /** The share cap's window, milliseconds: it starts with a pause and lasts this long. */
  windowMs: number;
  /** Each pause as it ends: how long it lasted (milliseconds), and why it ended. */
  onPause?: (ms: number, end: PauseEnd) => void;
  /** Sends a signal to a process (tests); by default process.kill. */
  kill?: (pid: number, signal: 'SIGSTOP' | 'SIGCONT') => void;
  /** A monotonic clock in milliseconds (tests); by default performance.now. */
  now?: () => number;
}

/**
 * Text first: the OCR processes that run a reading are stopped (SIGSTOP) while a text-only moderation is in flight,
 * and continued (SIGCONT) once none is, after `lingerMs`. On this 2-vCPU machine any busy work on the other vCPU slows
 * text moderation, whatever its priority, so OCR yields the CPU entirely instead of only its priority.
 * - the share cap keeps OCR going: in each window of `windowMs` it is paused for `maxPausedMs` at most, then runs for
 *   the rest of the window, so a steady stream of text cannot starve it. A pause spanning a window's end goes on in the
 *   next window, so one lasts at most twice `maxPausedMs`;
 * - `pausedMs` is the paused time so far, so that a watchdog of wall time does not count it;
 * - records with images do not enter the gate: a record waiting for OCR never pauses its own reading.
 * SIGSTOP does not exist on Windows; the pool does not pause there.
 */
export class TextFirst {
  /** The processes running a reading: paused while the gate is busy. */
  private readers: readonly number[] = [];
  private readonly stopped = new Set<number>();
  /** When the running pause began, undefined when not paused. */
  private pausedSince?: number;
  /** Since when the running pause counts in the current window (its start, or the window's when it rolled over). */
  private countedSince = 0;
  private windowStart = Number.NEGATIVE_INFINITY;
  /** Paused time of the current window before `countedSince`. */
  private usedMs = 0;
  /** Paused time of the pauses that ended. */
  private pausedBeforeMs = 0;
  private lingerTimer?: NodeJS.Timeout;
  /** Ends a pause at the share cap or at its window's end; or, at the cap, tries again when the window ends. */
  private capTimer?: NodeJS.Timeout;
  private closed = false;
  private readonly unsubscribe: () => void;
  /** A stopped process would stay stopped after its moderator exits: it is continued then, and so ends. */
  private readonly onExit = () => this.resume('closed');
  private readonly kill: (pid: number, signal: 'SIGSTOP' | 'SIGCONT') => void;
  private readonly now: () => number;

  constructor(private readonly options: TextFirstOptions) {
    // At the cap a pause must end within its window, or a steady stream of text would hold OCR stopped.
    if (!(options.maxPausedMs < options.windowMs))
      throw new Error('the paused time per window must be below the window');
    this.kill = options.kill ?? ((pid, signal) => process.kill(pid, signal));
    this.now = options.now ?? (() => performance.now());
    this.unsubscribe = options.gate.onChange((busy) => (busy ? this.onBusy() : this.onIdle()));
    process.on('exit', this.onExit);
  }

  /** Whether the readers are stopped now. */
  get paused(): boolean {
    return this.pausedSince !== undefined;
  }

  /** Time the readers were paused so far, the running pause included, milliseconds. */
  pausedMs(): number {
    return this.pausedBeforeMs + (this.pausedSince === undefined ? 0 : this.now() - this.pausedSince);
  }

  /** The processes running a reading now; the pool tells each change (a reading started or ended). */
  setReaders(pids: readonly number[]): void {
    this.readers = [...pids];
    if (this.pausedSince === undefined) {
      if (this.options.gate.busy) this.pause();
      return;
    }
    if (pids.length === 0) {
      this.resume('no_reading');
      return;
    }
    for (const pid of this.stopped) {
      if (pids.includes(pid)) continue;
      this.stopped.delete(pid);
      this.signal(pid, 'SIGCONT');
    }
    for (const pid of pids) this.stop(pid);
  }

  /** Continues the readers and stops listening to the gate. */
  close(): void {
    this.closed = true;
    this.unsubscribe();
    process.off('exit', this.onExit);
    this.resume('closed');
    clearTimeout(this.capTimer);
    clearTimeout(this.lingerTimer);
  }

  private onBusy(): void {
    clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
    this.pause();
  }

  private onIdle(): void {
    if (this.pausedSince === undefined) return;
    if (this.options.lingerMs <= 0) {
      this.resume('text_idle');
      return;
    }
    clearTimeout(this.lingerTimer);
    this.lingerTimer = setTimeout(() => this.resume('text_idle'), this.options.lingerMs);
    this.lingerTimer.unref();
  }

  private pause(): void {
    if (this.closed || this.pausedSince !== undefined || this.readers.length === 0) return;
    const now = this.now();
    const { maxPausedMs, windowMs } = this.options;
    if (now >= this.windowStart + windowMs) {
      this.windowStart = now;
      this.usedMs = 0;
    }
    const left = maxPausedMs - this.usedMs;
    if (left <= 0) {
      this.retryAtWindowEnd(now);
      return;
    }
    clearTimeout(this.capTimer);
    this.pausedSince = now;
    this.countedSince = now;
    for (const pid of this.readers) this.stop(pid);
    this.armCap(now, left);
  }

  /** Ends the pause when the window's allowance is spent, or, at the window's end first, counts it in a new window. */
  private armCap(now: number, left: number): void {
    const windowLeft = this.windowStart + this.options.windowMs - now;
    this.capTimer = setTimeout(() => this.atCap(), Math.max(0, Math.min(left, windowLeft)));
    this.capTimer.unref();
  }

  private atCap(): void {
    this.capTimer = undefined;
    if (this.pausedSince === undefined) return;
    const now = this.now();
    if (now >= this.windowStart + this.options.windowMs) {
      this.windowStart = now;
      this.usedMs = 0;
      this.countedSince = now;
      this.armCap(now, this.options.maxPausedMs);
      return;
    }
    this.resume('share_cap');
    this.retryAtWindowEnd(now);
  }

  /** At the cap: OCR runs until the window ends, then pauses again if text is still in flight. */
  private retryAtWindowEnd(now: number): void {
    if (this.capTimer) return;
    this.capTimer = setTimeout(
      () => {
        this.capTimer = undefined;
        if (this.options.gate.busy) this.pause();
      },
      Math.max(0, this.windowStart + this.options.windowMs - now),
    );
    this.capTimer.unref();
  }

  private resume(end: PauseEnd): void {
    const since = this.pausedSince;
    if (since === undefined) return;
    const now = this.now();
    clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
    clearTimeout(this.capTimer);
    this.capTimer = undefined;
    this.usedMs += now - this.countedSince;
    this.pausedBeforeMs += now - since;
    this.pausedSince = undefined;
    for (const pid of this.stopped) this.signal(pid, 'SIGCONT');
    this.stopped.clear();
    this.options.onPause?.(now - since, end);
  }

  private stop(pid: number): void {
    if (this.stopped.has(pid)) return;
    this.stopped.add(pid);
    this.signal(pid, 'SIGSTOP');
  }

  private signal(pid: number, signal: 'SIGSTOP' | 'SIGCONT'): void {
    try {
      this.kill(pid, signal);
    } catch {
      // The process ended (a reading over its budget is SIGKILLed): the pool starts another.
    }
  }
}
