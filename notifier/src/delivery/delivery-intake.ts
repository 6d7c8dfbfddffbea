import { LRUCache } from 'lru-cache';
import pino, { type Logger } from 'pino';
import type { DeliveryDoc, DeliveryStore } from '../store/delivery-store';
import { attemptFits } from '../queue/due-jobs';
import { insertConfirmed, waitAtMost, type ConfirmedInsertOptions } from './confirmed-insert';
import { OUTCOME_WRITER_BOUNDS, type OutcomeWriter } from './outcome-writer';

/**
 * What became of a delivery whose first attempt was made before it was stored: `stored` with the attempt's outcome,
 * `leased` before the receiver answered (the outcome is written under the lease when it comes; so too when an earlier
 * try of this batch stored it under the same lease, its reply lost), `existed` (another notifier stored it, or an
 * earlier try whose lease ran out), or `dropped` (not stored: the batch is handled again later).
 */
export type FirstAttemptFate = 'stored' | 'leased' | 'existed' | 'dropped';

/** A first attempt under way for a delivery not stored yet (see LeaseHolder.sendFirst). */
export interface FirstAttempt {
  /**
   * Settles once the receiver answered: the delivery as it is to be stored with the outcome, or undefined when it was
   * not sent (its endpoint gone, disabled or without a secret; the usual path records why once it is stored leased).
   * Never rejects.
   */
  readonly answered: Promise<DeliveryDoc | undefined>;
  /**
   * Says what became of the delivery; until then the worker's slot stays taken. `stored` is said once the delivery
   * is handed to the outcome writer, when there is one (see DeliveryIntake), with `written`, which settles once the
   * writer inserted it (rejects if it never will): what follows the outcome (the endpoint's health, the log line)
   * waits for it, the slots do not.
   */
  decide(fate: FirstAttemptFate, written?: Promise<void>): void;
}

/** A worker that takes deliveries as they are inserted (the local scheduler), within the slots it has free. */
export interface LeaseHolder {
  /** How long a delivery leased to it stays its own, milliseconds. */
  readonly leaseMs: number;
  /**
   * The longest an attempt takes (the receiver's timeout), milliseconds: a lease with less left could run out while
   * the receiver is called, and another notifier take the delivery over and send it again.
   */
  readonly attemptMs: number;
  /** Promises a slot for a delivery to this endpoint; false when there is no room. */
  reserve(endpointId: string): boolean;
  /** The delivery was inserted leased to the holder: it works it in the reserved slot. */
  adopt(doc: DeliveryDoc): void;
  /** The reserved slot is not needed (the insert failed, or the delivery existed). */
  release(endpointId: string): void;
  /** Makes the first attempt of a delivery not stored yet, in the reserved slot. */
  sendFirst(doc: DeliveryDoc): FirstAttempt;
  /** Whether the endpoint's last attempt took longer than the first attempt's wait, or missed it and is still out. */
  isSlow(endpointId: string): boolean;
  /** A first attempt to the endpoint missed the wait: slow until one of its attempts answers within it. */
  markSlow(endpointId: string): void;
}

export interface DeliveryIntakeOptions {
  /**
   * How long a fresh delivery's first attempt is waited for before the delivery is stored, milliseconds. Those
   * answered within it are stored once, with their outcome; the others are stored leased, as when 0.
   */
  firstAttemptWaitMs: number;
  /**
   * How the inserts of deliveries whose first attempt was made are tried until confirmed (ConfirmedInsert), and how
   * long `close` lets them go on. Default OUTCOME_WRITER_BOUNDS's, every failure passing.
   */
  inserts?: Partial<Pick<ConfirmedInsertOptions, 'backoff' | 'isolateAfterAttempts' | 'retriable'>> & {
    closeDeadlineMs?: number;
  };
  /** A delivery the store refused for a reason of its own was dropped (see ConfirmedInsert). */
  onDropped?: () => void;
  log?: Logger;
}

/** A delivery whose leased insert failed, kept for the batch's next try (see DeliveryIntake.unstored). */
interface Unstored {
  doc: DeliveryDoc;
  /** The end of the lease it went in under, epoch milliseconds: it goes in again under it while an attempt fits. */
  leaseUntil: number;
  timer: NodeJS.Timeout;
}

/** A leased delivery whose insert failed waits this long for the batch to be handled again. */
const UNSTORED_KEEP_MS = 30_000;

/**
 * Deliveries this process took in lately, at most this many for at most this long: an event published again soon (the
 * moderator's outbox sweep, a producer replaced after a broker failed) lands on the same partition, usually still
 * this consumer's, and is claimed first rather than sent again. About 2 MB at the most.
 */
const RECENT_MAX = 20_000;
const RECENT_MS = 120_000;

const silentLog = pino({ level: 'silent' });

/**
 * How new deliveries come in. Each delivery with a body gets a slot of this process's scheduler if one is free. A
 * fresh one (its event read for the first time, see `take`) is sent at once, before it is stored: answered within
 * `firstAttemptWaitMs`, it is inserted once with its outcome (one write instead of an insert and an update); not
 * answered by then, it is inserted leased to the scheduler, which goes on with the attempt and writes its outcome.
 * The others with a slot are inserted leased to the scheduler (the claim), which sends them; the rest wait in the due
 * queue.
 *
 * The batch never waits for a receiver. It inserts, in one insertMany, the deliveries that made no first attempt, and
 * returns; those that did are stored after it (`later`), once their receivers answered or the wait ended, and the
 * batch's offset waits for that (`settled`, which the events consumer's commit follows), not the batch. So a
 * receiver that hangs holds its own deliveries' inserts for one wait, never another tenant's events: the consumer
 * reads on meanwhile. A crash before they are stored leaves their events uncommitted, read again: nothing is lost.
 * An endpoint that did not answer within the wait gets no first attempt before its delivery is stored until one of its
 * attempts (they go on, claimed first) answers within it. Endpoint slots and breakers apply as to every attempt, so
 * one tenant's receivers never take another's slots.
 *
 * With an outcome writer (write-behind), those answered in time are handed to the writer, which inserts them with
 * other batches' within its window. A batch waits for room in the writer before it sends anything. A delivery the
 * writer holds, or whose first attempt is still to be stored, is taken in already: a batch read again meanwhile
 * leaves it be.
 */
export class DeliveryIntake {
  /**
   * Leased deliveries whose insert failed, kept for the batch's next try: they go in again under the same lease (the
   * insert may have landed, its reply lost) while an attempt fits in that lease.
   */
  private readonly unstored = new Map<string, Unstored>();
  /** Ids of the deliveries taken in lately (stored, or found stored). */
  private readonly recent = new LRUCache<string, true>({ max: RECENT_MAX, ttl: RECENT_MS });
  /** Ids of the deliveries whose first attempt was made and which are not stored yet (see `later`). */
  private readonly pendingFirsts = new Set<string>();
  /** The stores of first attempts under way (see `later`). */
  private readonly laterStores = new Set<Promise<void>>();
  /** Given up at the close deadline: the inserts' tries end. */
  private readonly deadline = new AbortController();
  private closed?: Promise<void>;

  constructor(
    private readonly store: Pick<DeliveryStore, 'insertNew'>,
    /** This process's scheduler, if it runs one. */
    private readonly holder: LeaseHolder | undefined,
    private readonly onWork: () => void,
    private readonly options: DeliveryIntakeOptions = { firstAttemptWaitMs: 0 },
    /** Where the deliveries stored with their outcome go, when their insert may follow the batch. */
    private readonly writer?: Pick<OutcomeWriter, 'room' | 'add' | 'has'>,
  ) {}

  /**
   * Takes the deliveries in; `fresh` names those whose event this consumer reads for the first time (not re-read
   * after a partition was assigned to it, nor republished), which may be sent before they are stored. Returns the ids
   * inserted by the batch, those the scheduler adopted (leased to it), and those sent first, to be stored after the
   * batch (see `settled`).
   */
  async take(
    given: DeliveryDoc[],
    fresh: ReadonlySet<string> = new Set(),
  ): Promise<{ inserted: Set<string>; adopted: Set<string>; sentFirst: Set<string> }> {
    const { holder, writer } = this;
    // Sent webhooks not stored yet stay within the writer's bound: the batch waits for room before it sends.
    if (writer && fresh.size > 0 && this.options.firstAttemptWaitMs > 0) await writer.room();
    const now = Date.now();
    const until = new Date(now + (holder?.leaseMs ?? 0));
    // A leased delivery whose insert an earlier try of the batch made goes in under the same lease id (the batch is
    // built anew for each try). One the writer holds, or whose first attempt is to be stored, is taken in already.
    const docs: DeliveryDoc[] = [];
    const firsts = new Map<string, { doc: DeliveryDoc; first: FirstAttempt }>();
    const reserved = new Set<string>();
    /** The leased deliveries that go in under an earlier try's lease id, and that lease's end. */
    const reused = new Map<string, number>();
    for (const offered of given) {
      if (writer?.has(offered._id) || this.pendingFirsts.has(offered._id)) continue;
      const earlier = this.unstored.get(offered._id);
      if (earlier) {
        clearTimeout(earlier.timer);
        this.unstored.delete(offered._id);
      }
      // Without a slot a delivery goes in pending; an earlier try's leased insert that landed is then taken over.
      if (!holder || !offered.body || !holder.reserve(offered.endpointId)) {
        docs.push(offered);
        continue;
      }
      // An earlier try's lease is reused while an attempt started now ends within it, on the clock that set its end.
      // Later the delivery goes in under a new lease: one that landed is then found `existed` and taken over once its
      // lease ran out, late but sent once. It still makes no first attempt: it may be stored already.
      const reuse = earlier && attemptFits(earlier.leaseUntil, holder.attemptMs, now) ? earlier : undefined;
      if (reuse) reused.set(reuse.doc._id, reuse.leaseUntil);
      const doc = reuse?.doc ?? offered;
      const first =
        !earlier &&
        fresh.has(doc._id) &&
        this.options.firstAttemptWaitMs > 0 &&
        !holder.isSlow(doc.endpointId) &&
        !this.recent.has(doc._id);
      if (first) {
        firsts.set(doc._id, { doc, first: holder.sendFirst(doc) });
        continue;
      }
      docs.push(doc);
      reserved.add(doc._id);
    }
    if (firsts.size > 0) this.later(firsts, until);
    let inserted: Set<string>;
    try {
      inserted =
        docs.length > 0
          ? await this.store.insertNew(docs, reserved.size > 0 ? { ids: reserved, until } : undefined)
          : new Set();
    } catch (err) {
      for (const doc of docs) {
        if (!reserved.has(doc._id)) continue;
        holder?.release(doc.endpointId);
        // The deadline stays the one of the try that chose the lease id: a later try sets a later lease end on the
        // document, but the delivery may be stored with the first one's.
        this.keepUnstored(doc, reused.get(doc._id) ?? until.getTime());
      }
      throw err;
    }
    const adopted = new Set<string>();
    for (const doc of docs) {
      this.recent.set(doc._id, true);
      if (!reserved.has(doc._id)) continue;
      if (inserted.has(doc._id)) {
        holder?.adopt(doc);
        adopted.add(doc._id);
      } else holder?.release(doc.endpointId);
    }
    if ([...inserted].some((id) => !adopted.has(id))) this.onWork();
    return { inserted, adopted, sentFirst: new Set(firsts.keys()) };
  }

  /**
   * Settles once every delivery whose first attempt was made so far is stored, or handed to the outcome writer
   * (undefined when there is none); rejects if one never will be (a stop's deadline passed first).
   */
  settled(): Promise<void> | undefined {
    if (this.laterStores.size === 0) return undefined;
    return Promise.all([...this.laterStores]).then(() => undefined);
  }

  /**
   * Stores what the first attempts under way wait for, at once for those past their wait, and settles once they are
   * stored; after the deadline (`inserts.closeDeadlineMs`) the rest are given up: their events are read again.
   */
  close(): Promise<void> {
    this.closed ??= this.closeNow();
    return this.closed;
  }

  private async closeNow(): Promise<void> {
    if (this.laterStores.size === 0) return;
    const done = Promise.allSettled([...this.laterStores]);
    await waitAtMost(done, this.options.inserts?.closeDeadlineMs ?? OUTCOME_WRITER_BOUNDS.closeDeadlineMs);
    if (this.laterStores.size === 0) return;
    this.deadline.abort();
    this.options.log?.warn(
      { deliveries: this.pendingFirsts.size },
      'deliveries sent first not stored before the deadline: their events will be read again',
    );
    await done;
  }

  /**
   * Stores the deliveries whose first attempt was made, after the batch: once each receiver answered or the wait
   * ended, those answered go in with their outcome (to the writer, when there is one) and the others leased, the
   * scheduler going on with their attempt. Each insert is tried until confirmed (ConfirmedInsert).
   */
  private later(firsts: ReadonlyMap<string, { doc: DeliveryDoc; first: FirstAttempt }>, until: Date): void {
    for (const id of firsts.keys()) this.pendingFirsts.add(id);
    const stored = this.storeFirsts(firsts, until).finally(() => {
      for (const id of firsts.keys()) this.pendingFirsts.delete(id);
      this.laterStores.delete(stored);
    });
    // The consumer's commit follows `settled`, which carries a failure: none is left unhandled here.
    stored.catch(() => undefined);
    this.laterStores.add(stored);
  }

  private async storeFirsts(
    firsts: ReadonlyMap<string, { doc: DeliveryDoc; first: FirstAttempt }>,
    until: Date,
  ): Promise<void> {
    const answers = await this.answersWithin(firsts, this.options.firstAttemptWaitMs);
    const withOutcome: DeliveryDoc[] = [];
    const leased: DeliveryDoc[] = [];
    for (const [id, { doc }] of firsts) {
      const answer = answers.get(id);
      if (answer) withOutcome.push(answer);
      else {
        leased.push(doc);
        if (!answers.has(id)) this.holder?.markSlow(doc.endpointId);
      }
    }
    let written: Promise<void> | undefined;
    if (this.writer && withOutcome.length > 0) {
      written = this.writer.add(withOutcome);
      for (const doc of withOutcome) {
        this.recent.set(doc._id, true);
        firsts.get(doc._id)?.first.decide('stored', written);
      }
    }
    const toInsert = this.writer ? leased : [...withOutcome, ...leased];
    if (toInsert.length > 0) {
      const leasedIds = new Set(leased.map((doc) => doc._id));
      const dropped = new Set<string>();
      let inserted: Set<string>;
      try {
        inserted = await insertConfirmed(
          this.store,
          toInsert,
          leasedIds.size > 0 ? { ids: leasedIds, until } : undefined,
          {
            ...OUTCOME_WRITER_BOUNDS,
            ...this.options.inserts,
            giveUp: this.deadline.signal,
            onDropped: (doc, err) => {
              dropped.add(doc._id);
              this.options.log?.error(
                { err, deliveryId: doc._id, tenantId: doc.tenantId, endpointId: doc.endpointId },
                'delivery refused by the store, dropped: its first attempt was made, it is not in the delivery log',
              );
              firsts.get(doc._id)?.first.decide('dropped');
              this.options.onDropped?.();
            },
            what: 'deliveries sent first',
            log: this.options.log ?? silentLog,
          },
        );
      } catch (err) {
        for (const doc of toInsert) firsts.get(doc._id)?.first.decide('dropped');
        throw err;
      }
      for (const doc of toInsert) {
        if (dropped.has(doc._id)) continue;
        this.recent.set(doc._id, true);
        const isNew = inserted.has(doc._id);
        firsts.get(doc._id)?.first.decide(!isNew ? 'existed' : leasedIds.has(doc._id) ? 'leased' : 'stored');
      }
    }
    await written;
  }
  /**
   * The first attempts answered within `waitMs`: the delivery to store with its outcome, or undefined for one that was
   * not sent. Those still waiting are absent.
   */
  private async answersWithin(
    firsts: ReadonlyMap<string, { first: FirstAttempt }>,
    waitMs: number,
  ): Promise<Map<string, DeliveryDoc | undefined>> {
    const answers = new Map<string, DeliveryDoc | undefined>();
    if (firsts.size === 0) return answers;
    const all = Promise.all(
      [...firsts].map(async ([id, { first }]) => {
        const answer = await first.answered;
        answers.set(id, answer);
      }),
    );
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)));
    await Promise.race([all, deadline]);
    clearTimeout(timer);
    // A copy: answers that come after the deadline do not change what was decided.
    return new Map(answers);
  }

  /**
   * The batch's insert failed: its first attempts and its leased deliveries wait for its next try; after
   * UNSTORED_KEEP_MS the first attempts are dropped, and a leased one that landed is taken over once its lease ran out.
   * A leased one goes in again under its lease id only while an attempt fits in that lease (`leaseUntil`); it is kept
   * after that all the same, so that the next try makes no first attempt for a delivery that may be stored.
   */
  private keepUnstored(doc: DeliveryDoc, leaseUntil: number): void {
    const timer = setTimeout(() => this.unstored.delete(doc._id), UNSTORED_KEEP_MS);
    timer.unref();
    this.unstored.set(doc._id, { doc, leaseUntil, timer });
  }
}
