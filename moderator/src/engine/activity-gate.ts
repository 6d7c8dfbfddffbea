/**
 * Counts work of a higher priority in flight (the moderator's text-only moderations), so that work of a lower
 * priority (image inference, see OffLoopPool's `yieldTo`) can start at a moment without it.
 */
export class ActivityGate {
  private active = 0;
  private readonly idleListeners = new Set<() => void>();

  /** Marks one piece of work in flight until the returned function is called (a second call does nothing). */
  enter(): () => void {
    this.active += 1;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.active -= 1;
      if (this.active > 0) return;
      const listeners = [...this.idleListeners];
      this.idleListeners.clear();
      for (const listener of listeners) listener();
    };
  }

  /** Whether any work is in flight. */
  get busy(): boolean {
    return this.active > 0;
  }

  /** Calls `listener` once, the next time no work is in flight; the returned function cancels that. */
  onceIdle(listener: () => void): () => void {
    this.idleListeners.add(listener);
    return () => this.idleListeners.delete(listener);
  }
}
