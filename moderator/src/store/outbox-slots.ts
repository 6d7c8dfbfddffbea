/** Width of an outbox slot, milliseconds: one marker per process and second in which it appended. */
export const SLOT_MS = 1_000;

/** A slot's name: the appending process's instance id and a second of its clock (`<instanceId>:<second>`). */
export function slotName(instanceId: string, at: number): string {
  return `${instanceId}:${Math.floor(at / SLOT_MS)}`;
}

/** When a slot's second ends (epoch ms); NaN for a name that is not a slot's. */
export function slotEnd(slot: string): number {
  const second = Number(slot.slice(slot.lastIndexOf(':') + 1));
  return slot.includes(':') && Number.isInteger(second) ? (second + 1) * SLOT_MS : Number.NaN;
}

interface OpenSlot {
  /** The marker's insert: resolved once it is durable; a failed one is forgotten, so the next append tries again. */
  marker?: Promise<void>;
  /** A marker insert was sent (one that failed may still have written it). */
  marked: boolean;
  /** Appends of the slot still in flight. */
  inFlight: number;
  /** Events of the slot stored and not published yet. */
  pending: Set<string>;
  /** An append of the slot failed without proof of what it stored: which events the slot holds is unknown here. */
  uncertain: boolean;
}

/**
 * What this process knows of its own outbox slots: their markers, appends in flight, events stored and not published
 * yet. A slot's marker goes once the slot is closed (its second is over, so no append takes it again, and none is in
 * flight) and every event it holds is published. A slot with an uncertain append is never taken out from here: a
 * sweep reads what it holds from the store (see OutboxRelay). Time is the process's monotonic clock, so that a clock
 * set back cannot reopen a closed slot.
 */
export class SlotBook {
  private readonly slots = new Map<string, OpenSlot>();
  /** Slot of each pending event. */
  private readonly eventSlots = new Map<string, string>();

  constructor(
    readonly instanceId: string,
    private readonly now: () => number = monotonicNow,
  ) {}

  /** The slot an append starting now takes. */
  current(): string {
    return slotName(this.instanceId, this.now());
  }

  /**
   * Opens an append in the current slot: its marker is inserted (once per slot, by `insert`) and durable before this
   * resolves. A failed or unanswered insert fails the append; the next one inserts the marker again.
   */
  async begin(insert: (slot: string) => Promise<void>): Promise<string> {
    const slot = this.current();
    const open = this.entry(slot);
    open.inFlight += 1;
    open.marked = true;
    const marker = (open.marker ??= insert(slot));
    try {
      await marker;
      return slot;
    } catch (err) {
      if (open.marker === marker) open.marker = undefined;
      this.end(slot, [], true);
      throw err;
    }
  }

  /** Closes an append of `slot`: `stored`, the ids it stored; `certain`, whether the store proved what it stored. */
  end(slot: string, stored: readonly string[], certain: boolean): void {
    const open = this.entry(slot);
    open.inFlight = Math.max(0, open.inFlight - 1);
    if (!certain) open.uncertain = true;
    for (const id of stored) {
      open.pending.add(id);
      this.eventSlots.set(id, slot);
    }
  }

  /** The slot of a stored event not yet published; undefined once published (or never appended here). */
  slotOf(eventId: string): string | undefined {
    return this.eventSlots.get(eventId);
  }

  /** Whether this event was appended here and is not published yet. */
  isPending(eventId: string): boolean {
    return this.eventSlots.has(eventId);
  }

  /** These events are published (or set aside). */
  published(eventIds: readonly string[]): void {
    for (const id of eventIds) {
      const slot = this.eventSlots.get(id);
      if (slot === undefined) continue;
      this.eventSlots.delete(id);
      this.slots.get(slot)?.pending.delete(id);
    }
  }

  /** Whether the slot is tracked here (an own slot whose marker was not handed to removal yet). */
  has(slot: string): boolean {
    return this.slots.has(slot);
  }

  /** Whether an append of the slot is in flight. */
  inFlight(slot: string): boolean {
    return (this.slots.get(slot)?.inFlight ?? 0) > 0;
  }

  /** Whether an append of the slot left its outcome unknown. */
  uncertain(slot: string): boolean {
    return this.slots.get(slot)?.uncertain ?? false;
  }

  /** The slots an append of which left its outcome unknown: a sweep here reads them, marker or not. */
  uncertainSlots(): string[] {
    return [...this.slots].filter(([, open]) => open.uncertain).map(([slot]) => slot);
  }

  /**
   * The slots whose markers can go now (closed, every event published, no uncertain append), forgotten here: an
   * append can no longer take them.
   */
  takeRemovable(): string[] {
    const current = this.current();
    const removable: string[] = [];
    for (const [slot, open] of this.slots) {
      if (slot === current || open.inFlight > 0 || open.uncertain || open.pending.size > 0) continue;
      this.slots.delete(slot);
      // A marker whose inserts all failed may be there all the same (a lost reply): it goes too.
      if (open.marked) removable.push(slot);
    }
    return removable;
  }

  /** Stops tracking a slot a sweep has taken out. */
  forget(slot: string): void {
    const open = this.slots.get(slot);
    if (!open) return;
    for (const id of open.pending) this.eventSlots.delete(id);
    this.slots.delete(slot);
  }

  /**
   * Milliseconds until the first slot waiting only for its second to end can go (0 when one's second is over already);
   * Infinity when none waits so. Every slot counts, not only the current one: a slot that was current when the relay
   * last took the removable ones may have closed since, and the relay must not sleep past it.
   */
  closesIn(): number {
    const now = this.now();
    let soonest = Number.POSITIVE_INFINITY;
    for (const [slot, open] of this.slots) {
      if (open.inFlight > 0 || open.uncertain || open.pending.size > 0) continue;
      soonest = Math.min(soonest, Math.max(0, slotEnd(slot) - now));
    }
    return soonest;
  }

  /** Slots tracked here. */
  get size(): number {
    return this.slots.size;
  }

  private entry(slot: string): OpenSlot {
    let open = this.slots.get(slot);
    if (!open) {
      open = { inFlight: 0, pending: new Set(), uncertain: false, marked: false };
      this.slots.set(slot, open);
    }
    return open;
  }
}

/** Epoch milliseconds that never go back (the process's monotonic clock, anchored at its start). */
function monotonicNow(): number {
  return performance.timeOrigin + performance.now();
}
