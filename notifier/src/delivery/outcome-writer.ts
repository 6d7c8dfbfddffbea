import type { BackoffPolicy } from '@vigil/proto/platform';
import type { Logger } from 'pino';
import type { DeliveryDoc, DeliveryStore } from '../store/delivery-store';
import { ISOLATE_AFTER_ATTEMPTS } from '../store/store-errors';
import { insertConfirmed, waitAtMost } from './confirmed-insert';

export interface OutcomeWriterOptions {
  /** How long the first delivery waiting is kept for others to join its insert, milliseconds. */
  windowMs: number;
  /** Deliveries per insert at most: that many waiting are written at once, window or not. */
  maxGroup: number;
  /** Deliveries waiting or being written beyond which `room` waits. */
  maxPending: number;
  /** Their size (bodies and attempts, roughly) beyond which `room` waits, bytes. */
  maxPendingBytes: number;
  /** Delays between the tries of an insert that failed. */
  backoff: BackoffPolicy;
  /** Once `close` is called, how long the writes go on before what is left is given up, milliseconds. */
  closeDeadlineMs: number;
  /**
   * Failed tries of an insert after which its deliveries are inserted one at a time, and one the store refuses for a
   * reason of its own (not `retriable`) is dropped.
   */
  isolateAfterAttempts: number;
  /** Whether a failure may pass (the store away, a reply lost). Default: every failure, so nothing is dropped. */
  retriable?: (err: unknown) => boolean;
  /** A delivery the store refused was dropped: its webhook went out, its row is not in the delivery log. */
  onDropped?: () => void;
  log: Logger;
}

/** The defaults of everything but the window and the log (see DeliveryModule). */
export const OUTCOME_WRITER_BOUNDS = {
  maxGroup: 64,
  maxPending: 1_000,
  maxPendingBytes: 16 * 1024 * 1024,
  backoff: { initialMs: 100, maxMs: 5_000 },
  closeDeadlineMs: 5_000,
  isolateAfterAttempts: ISOLATE_AFTER_ATTEMPTS,
} satisfies Omit<OutcomeWriterOptions, 'windowMs' | 'log'>;

class GivenUp extends Error {}

/** Bytes counted for a delivery besides its body and attempts' text (ids, trigger, dates). */
const DOC_OVERHEAD_BYTES = 1_024;

/**
 * Writes deliveries whose first attempt was answered before they were stored (stored once, with the outcome, see
 * DeliveryIntake), gathered from the batches of every partition: one insert per window (`windowMs` from the first
 * delivery waiting) or per `maxGroup` deliveries, one insert in flight at a time, in the order they came. Their
 * webhooks are out already; what waits for the insert is the batch's offset commit (`settled`), not the batch.
 *
 * An insert that failed, or whose reply was lost, is tried again with backoff until it is confirmed: the insert is
 * idempotent (derived ids; a delivery found stored already is done). Nothing is counted written before its insert
 * answered. After `isolateAfterAttempts` failed tries its deliveries go in one at a time, so that one the store refuses
 * for a reason of its own (not `retriable`) is dropped, logged and counted, and does not hold the others' offsets. The deliveries waiting are bounded (`maxPending`, `maxPendingBytes`): past the bound `room` waits, so a
 * store outage holds the batches (as an insert in the batch would) instead of growing memory. `close` writes what
 * waits at once and, after `closeDeadlineMs`, gives up the rest: their offsets are not committed, their events are read
 * again and their deliveries claimed first (the webhook may go out again, with the same webhook id).
 */
export class OutcomeWriter {
  /** Deliveries not in an insert yet, in the order they came (`at`, ms since epoch). */
  private waiting: { doc: DeliveryDoc; bytes: number; at: number }[] = [];
  private writing = false;
  /** Ids waiting or being written. */
  private readonly ids = new Set<string>();
  private pendingBytes = 0;
  /** Deliveries ever added, and of them (the first ones, in order) those whose insert was confirmed. */
  private added = 0;
  private confirmed = 0;
  private readonly barriers: { upTo: number; resolve: () => void; reject: (err: Error) => void }[] = [];
  private readonly roomWaiters: (() => void)[] = [];
  private timer?: NodeJS.Timeout;
  private closing = false;
  private closed?: Promise<void>;
  /** Given up at the close deadline: the inserts' tries end. */
  private readonly deadline = new AbortController();

  constructor(
    private readonly store: Pick<DeliveryStore, 'insertNew'>,
    private readonly options: OutcomeWriterOptions,
  ) {}

  /** Deliveries waiting or being written. */
  get pending(): number {
    return this.ids.size;
  }

  /** Whether the delivery is waiting or being written (it is taken in: nothing else inserts it meanwhile). */
  has(deliveryId: string): boolean {
    return this.ids.has(deliveryId);
  }

  /** Settles once the deliveries waiting are within the bounds (at once when they are, or once the writer gave up). */
  async room(): Promise<void> {
    while (!this.deadline.signal.aborted && this.full())
      await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
  }

  /**
   * Takes the deliveries to write; settles once they are written. Those given after the writer gave up (see `close`)
   * are never written: it rejects then.
   */
  add(docs: readonly DeliveryDoc[]): Promise<void> {
    for (const doc of docs) {
      if (this.ids.has(doc._id)) continue;
      const bytes = sizeOf(doc);
      this.waiting.push({ doc, bytes, at: Date.now() });
      this.ids.add(doc._id);
      this.pendingBytes += bytes;
      this.added += 1;
    }
    this.schedule();
    const written = this.settled() ?? Promise.resolve();
    // A caller may leave it: a rejection here is also the one `settled` gives the batch's offset commit.
    written.catch(() => undefined);
    return written;
  }

  /**
   * Settles once every delivery added so far is written (undefined when they are already); rejects once the writer
   * gave up before that.
   */
  settled(): Promise<void> | undefined {
    if (this.confirmed >= this.added) return undefined;
    if (this.deadline.signal.aborted) return Promise.reject(new GivenUp('deliveries not written before the deadline'));
    const upTo = this.added;
    return new Promise<void>((resolve, reject) => this.barriers.push({ upTo, resolve, reject }));
  }

  /**
   * Writes what waits at once, and from then on each delivery as it comes; settles once everything is written, or
   * `closeDeadlineMs` later with the rest given up. Idempotent.
   */
  close(): Promise<void> {
    this.closing = true;
    this.closed ??= this.closeNow();
    return this.closed;
  }

  private async closeNow(): Promise<void> {
    this.schedule();
    if (this.confirmed >= this.added) return;
    const done = new Promise<void>((resolve) => this.barriers.push({ upTo: this.added, resolve, reject: () => {} }));
    await waitAtMost(done, this.options.closeDeadlineMs);
    if (this.confirmed < this.added) this.giveUp();
  }

  private giveUp(): void {
    this.deadline.abort();
    const left = this.added - this.confirmed;
    this.options.log.warn(
      { deliveries: left },
      'delivery outcomes not written before the deadline: their events will be read again',
    );
    const err = new GivenUp('deliveries not written before the deadline');
    for (const barrier of this.barriers.splice(0)) barrier.reject(err);
    for (const wake of this.roomWaiters.splice(0)) wake();
  }

  private full(): boolean {
    return this.ids.size >= this.options.maxPending || this.pendingBytes >= this.options.maxPendingBytes;
  }

  /** Starts an insert now (a full group, or closing), or once the window of the first delivery waiting has passed. */
  private schedule(): void {
    const first = this.waiting[0];
    if (this.writing || !first || this.deadline.signal.aborted) return;
    const left = first.at + this.options.windowMs - Date.now();
    if (this.closing || this.waiting.length >= this.options.maxGroup || left <= 0) {
      clearTimeout(this.timer);
      this.timer = undefined;
      void this.write();
      return;
    }
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.schedule();
    }, left);
  }

  /** Inserts the first group waiting, tried again until it is confirmed or the writer gives up. */
  private async write(): Promise<void> {
    this.writing = true;
    const group = this.waiting.splice(0, this.options.maxGroup);
    try {
      await insertConfirmed(
        this.store,
        group.map(({ doc }) => doc),
        undefined,
        {
          ...this.options,
          giveUp: this.deadline.signal,
          onDropped: (doc, err) => {
            this.options.log.error(
              { err, deliveryId: doc._id, tenantId: doc.tenantId, endpointId: doc.endpointId },
              'delivery refused by the store, dropped: its webhook was sent, its outcome is not in the delivery log',
            );
            this.options.onDropped?.();
          },
          what: 'delivery outcomes',
        },
      );
    } catch {
      // Given up (see close): the barriers were rejected, nothing more is written.
      return;
    } finally {
      this.writing = false;
    }
    this.confirmed += group.length;
    for (const { doc, bytes } of group) {
      this.ids.delete(doc._id);
      this.pendingBytes -= bytes;
    }
    const reached = this.barriers.filter((barrier) => barrier.upTo <= this.confirmed);
    this.barriers.splice(0, this.barriers.length, ...this.barriers.filter((barrier) => barrier.upTo > this.confirmed));
    for (const barrier of reached) barrier.resolve();
    // Each waiter looks at the bounds again.
    if (!this.full()) for (const wake of this.roomWaiters.splice(0)) wake();
    this.schedule();
  }
}

function sizeOf(doc: DeliveryDoc): number {
  let bytes = DOC_OVERHEAD_BYTES + (doc.body?.length ?? 0);
  for (const attempt of doc.attempts ?? []) bytes += attempt.responseBody?.length ?? 0;
  return bytes;
}
