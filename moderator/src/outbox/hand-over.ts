import { HEADERS, type DomainEvent } from '@vigil/proto';
import type { Message } from 'kafkajs';
import { eventOf, type EventDoc } from '../store/event-doc';
import type { OutboxDoc } from '../store/outbox-store';

/** An event handed over in memory, with its message and the message's size. */
export interface Queued {
  doc: OutboxDoc;
  message: Message;
  bytes: number;
}

/**
 * The Kafka message of a stored event: key = stream, the event's id and type as headers; `replayed` (published by a
 * sweep, maybe not for the first time) adds the `vigil-replayed` header.
 */
export function toMessage(doc: EventDoc, replayed = false): Message {
  const event = eventOf(doc);
  const headers: Record<string, string> = { [HEADERS.eventId]: event.id, [HEADERS.eventType]: event.type };
  if (replayed) headers[HEADERS.replayed] = '1';
  return { key: event.stream, value: JSON.stringify(event), headers };
}

/**
 * The relay's memory: events this process appended, waiting to be published without reading them back, bounded by
 * `memoryBytes` of their messages. Past the bound it keeps only the outbox slots of further appends (overflow), oldest
 * first, so that the relay reads them from the store in append order until it has caught up; only then does memory
 * take appends again. It also gives the ingest consumer its back-pressure (`room`).
 */
export class HandOver {
  private queue: Queued[] = [];
  private queuedBytes = 0;
  /** Ids of the queued events and of those being published from memory; the sweep leaves them alone. */
  private readonly local = new Set<string>();
  private overflow = false;
  private readonly overflowSlots: string[] = [];
  private readonly overflowSet = new Set<string>();
  /** Callers of `room` waiting for the queue to shrink. */
  private roomWaiters: Array<() => void> = [];

  constructor(
    private readonly memoryBytes: number,
    /** The outbox slot of an appended event not yet published (undefined: none to read it back from). */
    private readonly slotOf: (eventId: string) => string | undefined,
  ) {}

  /** Takes appended events: into memory while under the bound, else (and until caught up) as overflow slots. */
  add(events: readonly DomainEvent[]): void {
    if (this.overflow) return this.spill(events);
    const queued = events.map((event): Queued => {
      const doc: OutboxDoc = { ...event, _id: event.id };
      const message = toMessage(doc);
      return { doc, message, bytes: Buffer.byteLength(message.value as string) };
    });
    const bytes = queued.reduce((sum, entry) => sum + entry.bytes, 0);
    if (this.queuedBytes + bytes > this.memoryBytes) {
      this.overflow = true;
      return this.spill(events);
    }
    for (const entry of queued) {
      this.queue.push(entry);
      this.local.add(entry.doc._id);
    }
    this.queuedBytes += bytes;
  }

  private spill(events: readonly DomainEvent[]): void {
    for (const event of events) {
      const slot = this.slotOf(event.id);
      if (slot === undefined || this.overflowSet.has(slot)) continue;
      this.overflowSet.add(slot);
      this.overflowSlots.push(slot);
    }
  }

  /** Events waiting in memory. */
  get length(): number {
    return this.queue.length;
  }

  /** Bytes of the events waiting in memory. */
  get bytes(): number {
    return this.queuedBytes;
  }

  /** Whether appends past the bound wait in overflow slots. */
  get overflowing(): boolean {
    return this.overflow;
  }

  /** Events queued here or being published from memory. */
  get localCount(): number {
    return this.local.size;
  }

  /** Whether the event is queued here or being published from memory. */
  has(eventId: string): boolean {
    return this.local.has(eventId);
  }

  /** The next `count` queued events, out of the queue; they count as local until `release`. */
  take(count: number): Queued[] {
    const entries = this.queue.splice(0, count);
    for (const entry of entries) this.queuedBytes -= entry.bytes;
    return entries;
  }

  /** Events taken and not published go back to the front of the queue, in their order; they stay local. */
  putBack(entries: readonly Queued[]): void {
    this.queue.unshift(...entries);
    for (const entry of entries) this.queuedBytes += entry.bytes;
  }

  /** Events taken are published, or left to the sweep. */
  release(entries: readonly Queued[]): void {
    for (const entry of entries) this.local.delete(entry.doc._id);
  }

  /** The oldest overflow slot not read out yet. */
  oldestSlot(): string | undefined {
    return this.overflowSlots[0];
  }

  /** The oldest overflow slot is read out (its last batch may still be publishing: see `liftIfCaughtUp`). */
  slotDone(): void {
    const slot = this.overflowSlots.shift();
    if (slot !== undefined) this.overflowSet.delete(slot);
  }

  /** Ends the overflow once every slot is read out and published: memory takes appends again. */
  liftIfCaughtUp(): void {
    if (this.overflowSlots.length === 0) this.overflow = false;
  }

  /** Overflow slots left to read. */
  get slotsLeft(): number {
    return this.overflowSlots.length;
  }

  /** Appends can go on without outrunning the relay: not in overflow, queue under an eighth of the bound. */
  hasRoom(): boolean {
    return !this.overflow && this.queuedBytes <= this.memoryBytes / 8;
  }

  /** Resolves true once `hasRoom()` (checked at each `releaseWaiters`), false after `maxWaitMs`. */
  room(maxWaitMs: number): Promise<boolean> {
    if (this.hasRoom()) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.roomWaiters = this.roomWaiters.filter((waiter) => waiter !== done);
        resolve(false);
      }, maxWaitMs);
      const done = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.roomWaiters.push(done);
    });
  }

  /** Lets waiting callers of `room` go on when there is room (or `always`, when the relay stops). */
  releaseWaiters(always = false): void {
    if (this.roomWaiters.length === 0 || (!always && !this.hasRoom())) return;
    const waiters = this.roomWaiters;
    this.roomWaiters = [];
    for (const waiter of waiters) waiter();
  }

  /** Forgets everything in memory (the store's outbox still has it) and lets waiters go on. */
  clear(): void {
    this.release(this.queue.splice(0));
    this.queuedBytes = 0;
    this.overflow = false;
    this.overflowSlots.length = 0;
    this.overflowSet.clear();
    this.releaseWaiters(true);
  }
}
