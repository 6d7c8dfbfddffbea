/**
 * Counts work of a higher priority in flight (the moderator's text-only moderations), so that work of a lower
 * priority can start at a moment without it (image inference, see OffLoopPool's `yieldTo`) or stop while it runs
 * (OCR, see TextFirst).
 */
export class ActivityGate {
  private active = 0;
  /** When the last piece of work in flight left (0: never). */
  private idleSince = 0;
  private readonly idleListeners = new Set<() => void>();
  private readonly changeListeners = new Set<(busy: boolean) => void>();

  /** Marks one piece of work in flight until the returned function is called (a second call does nothing). */
  enter(): () => void {
    this.active += 1;
    if (this.active === 1) for (const listener of this.changeListeners) listener(true);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.active -= 1;
      if (this.active > 0) return;
      this.idleSince = Date.now();
      for (const listener of this.changeListeners) listener(false);
      const listeners = [...this.idleListeners];
      this.idleListeners.clear();
      for (const listener of listeners) listener();
    };
  }

  /** Whether any work is in flight. */
  get busy(): boolean {
    return this.active > 0;
  }

  /** Whether work was in flight at any moment of the last `ms` milliseconds (now included). */
  activeWithin(ms: number, now = Date.now()): boolean {
    return this.active > 0 || (this.idleSince > 0 && now - this.idleSince < ms);
  }

  /** Calls `listener` once, the next time no work is in flight; the returned function cancels that. */
  onceIdle(listener: () => void): () => void {
    this.idleListeners.add(listener);
    return () => this.idleListeners.delete(listener);
  }

  /**
   * Calls `listener` each time the gate turns busy (`true`: the first piece of work entered) or idle (`false`: the last
   * left), until the returned function is called.
   */
  onChange(listener: (busy: boolean) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }
}
