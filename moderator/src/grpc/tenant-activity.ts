/**
 * Calls in flight per tenant, so that a tenant's heavy work can wait for a moment when no other tenant's call is in
 * flight (see `othersIdle`). Entries exist only for tenants with calls in flight.
 */
export class TenantActivity {
  private readonly active = new Map<string, number>();
  private readonly leaveListeners = new Set<() => void>();

  /** Marks one call of the tenant in flight until the returned function is called (a second call does nothing). */
  enter(tenantId: string): () => void {
    this.active.set(tenantId, (this.active.get(tenantId) ?? 0) + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const count = (this.active.get(tenantId) ?? 1) - 1;
      if (count > 0) this.active.set(tenantId, count);
      else this.active.delete(tenantId);
      for (const listener of [...this.leaveListeners]) listener();
    };
  }

  /** Whether a tenant other than `tenantId` has a call in flight. */
  othersBusy(tenantId: string): boolean {
    return this.active.size > (this.active.has(tenantId) ? 1 : 0);
  }

  /**
   * Waits until no tenant other than `tenantId` has a call in flight, at most `maxMs` (or until `signal` aborts).
   * Resolves `idle` when there was such a moment (at once when there is one now), `bound` when the wait ran out, and
   * `aborted` when the signal came first.
   */
  othersIdle(tenantId: string, maxMs: number, signal?: AbortSignal): Promise<'idle' | 'bound' | 'aborted'> {
    if (!this.othersBusy(tenantId)) return Promise.resolve('idle');
    if (maxMs <= 0) return Promise.resolve('bound');
    if (signal?.aborted) return Promise.resolve('aborted');
    return new Promise((resolve) => {
      const done = (outcome: 'idle' | 'bound' | 'aborted') => {
        clearTimeout(timer);
        this.leaveListeners.delete(onLeave);
        signal?.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      const onLeave = () => {
        if (!this.othersBusy(tenantId)) done('idle');
      };
      const onAbort = () => done('aborted');
      const timer = setTimeout(() => done('bound'), maxMs);
      this.leaveListeners.add(onLeave);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
