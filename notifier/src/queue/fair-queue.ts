/** An item that becomes takeable at `readyAt` (milliseconds since the epoch). */
export interface Ready {
  readyAt: number;
}

interface TenantQueue<T> {
  groups: Map<string, T[]>;
  /** Index of the group to look at first next time (round robin). */
  next: number;
}

/**
 * Items waiting by tenant and by group within the tenant (an endpoint), each group ordered by when its items become
 * ready. `take` hands out ready items round robin: one per tenant per pass, and within a tenant one group after the
 * other, so a tenant with a large backlog (a dead receiver's retries) gets the same share of free slots as one with a
 * single item, and a group at its capacity is passed over without holding the others.
 */
export class FairQueue<T extends Ready> {
  private readonly tenants = new Map<string, TenantQueue<T>>();
  private nextTenant = 0;
  private count = 0;

  get size(): number {
    return this.count;
  }

  push(tenant: string, group: string, item: T): void {
    let queue = this.tenants.get(tenant);
    if (!queue) {
      queue = { groups: new Map(), next: 0 };
      this.tenants.set(tenant, queue);
    }
    let list = queue.groups.get(group);
    if (!list) {
      list = [];
      queue.groups.set(group, list);
    }
    // Mostly appended in order; otherwise placed by binary search.
    let lo = 0;
    let hi = list.length;
    if (hi === 0 || list[hi - 1]!.readyAt <= item.readyAt) lo = hi;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (list[mid]!.readyAt <= item.readyAt) lo = mid + 1;
      else hi = mid;
    }
    list.splice(lo, 0, item);
    this.count += 1;
  }

  /** Every group with its items (ordered by `readyAt`), as they are now: copy before changing the queue. */
  *groups(): Generator<[string, readonly T[]]> {
    for (const queue of this.tenants.values()) yield* queue.groups.entries();
  }

  /** Removes the item if it is still queued. */
  remove(tenant: string, group: string, item: T): void {
    const queue = this.tenants.get(tenant);
    const list = queue?.groups.get(group);
    if (!queue || !list) return;
    const index = list.indexOf(item);
    if (index < 0) return;
    list.splice(index, 1);
    this.count -= 1;
    if (list.length === 0) queue.groups.delete(group);
    if (queue.groups.size === 0) this.tenants.delete(tenant);
  }

  /**
   * Takes up to `limit` items ready by `now`, round robin over tenants and their groups; a group takes at most
   * `capacity(group)` in this call (unbounded without it).
   */
  take(limit: number, now: number, capacity?: (group: string) => number): T[] {
    const taken: T[] = [];
    const perGroup = new Map<string, number>();
    const full = (group: string) => capacity !== undefined && (perGroup.get(group) ?? 0) >= capacity(group);
    let progress = true;
    while (taken.length < limit && progress) {
      progress = false;
      const tenants = [...this.tenants.entries()];
      for (let t = 0; t < tenants.length && taken.length < limit; t += 1) {
        const [tenant, queue] = tenants[(this.nextTenant + t) % tenants.length]!;
        const groups = [...queue.groups.entries()];
        for (let g = 0; g < groups.length; g += 1) {
          const index = (queue.next + g) % groups.length;
          const [group, list] = groups[index]!;
          const head = list[0];
          if (!head || head.readyAt > now || full(group)) continue;
          list.shift();
          this.count -= 1;
          if (list.length === 0) queue.groups.delete(group);
          perGroup.set(group, (perGroup.get(group) ?? 0) + 1);
          taken.push(head);
          queue.next = index + 1;
          progress = true;
          break;
        }
        if (queue.groups.size === 0) this.tenants.delete(tenant);
      }
      this.nextTenant += 1;
    }
    return taken;
  }
}
