import { LRUCache } from 'lru-cache';
import type { DeliveryDoc, DeliveryStore } from '../store/delivery-store';
import type { OutcomeWriter } from './outcome-writer';

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
   * How long a batch waits for the first attempts of its fresh deliveries before storing them, milliseconds. Those
   * answered within it are stored once, with their outcome; the others are stored leased, as when 0.
   */
  firstAttemptWaitMs: number;
}

/**
 * A delivery whose insert failed (its first attempt made, or leased to this process) waits this long for the batch to
 * be handled again.
 */
const UNSTORED_KEEP_MS = 30_000;

/** A delivery whose insert failed, kept for the batch's next try (see DeliveryIntake.unstored). */
interface Unstored {
  doc: DeliveryDoc;
  /** Its first attempt, made before it was stored: it goes in with it, under the same lease if leased. */
  first?: FirstAttempt;
  /**
   * Until when, epoch milliseconds, a leased one goes in again under its lease id: that lease's end less an attempt.
   * Infinity with a first attempt, which began as the lease did.
   */
  reuseUntil: number;
  timer: NodeJS.Timeout;
}

/**
 * Deliveries this process took in lately, at most this many for at most this long: an event published again soon (the
 * moderator's outbox sweep, a producer replaced after a broker failed) lands on the same partition, usually still
 * this consumer's, and is claimed first rather than sent again. About 2 MB at the most.
 */
const RECENT_MAX = 20_000;
const RECENT_MS = 120_000;

/**
 * How new deliveries come in. Each delivery with a body gets a slot of this process's scheduler if one is free. A
 * fresh one (its event read for the first time, see `take`) is sent at once, before it is stored: answered within
 * `firstAttemptWaitMs`, it is inserted once with its outcome (one write instead of an insert and an update). The
 * others, and those not answered in time, are inserted leased to the scheduler (the claim), which sends them or goes
 * on with their attempt and writes the outcome. The rest wait in the due queue. All go in one insertMany, which the
 * batch's commit follows, so a crash before it leaves the event to be read again: nothing is lost.
 *
 * The wait holds the batch, so it is short, and an endpoint that did not answer within it gets no first attempt
 * before its delivery is stored until one of its attempts (they go on, claimed first) answers within it: a slow
 * receiver holds the events behind it for one wait, not one per batch.
 * Endpoint slots and breakers apply as to every attempt, so one tenant's receivers never take another's slots.
 *
 * With an outcome writer (write-behind), those answered in time are not inserted by the batch: they are handed to the
 * writer, which inserts them with other batches' within its window, and the batch's offsets wait for that insert
 * (OutcomeWriter.settled), not the batch. Their slots go back as they are handed over: the writer's bound, not the
 * slots, limits the webhooks sent and not stored yet. A batch waits for room in the writer before it sends anything.
 * A delivery the writer holds is taken in already: a batch read again meanwhile leaves it to the writer.
 */
export class DeliveryIntake {
  /**
   * Deliveries whose insert failed, kept for the batch's next try: with their first attempt, which is not made again,
   * or leased to this process, under the same lease (the insert may have landed, its reply lost) until `reuseUntil`.
   */
  private readonly unstored = new Map<string, Unstored>();
  /** Ids of the deliveries taken in lately (stored, or found stored). */
  private readonly recent = new LRUCache<string, true>({ max: RECENT_MAX, ttl: RECENT_MS });

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
   * that were new, those the scheduler adopted (leased to it), and those stored with their first attempt's outcome.
   * With an outcome writer, those handed to it count as new and stored with their outcome (written soon after).
   */
  async take(
    given: DeliveryDoc[],
    fresh: ReadonlySet<string> = new Set(),
  ): Promise<{ inserted: Set<string>; adopted: Set<string>; withOutcome: Set<string> }> {
    const { holder, writer } = this;
    // Sent webhooks not stored yet stay within the writer's bound: the batch waits for room before it sends.
    if (writer && fresh.size > 0 && this.options.firstAttemptWaitMs > 0) await writer.room();
    const now = Date.now();
    const until = new Date(now + (holder?.leaseMs ?? 0));
    // A delivery whose insert an earlier try of the batch made goes in as that try had it: with its first attempt, or
    // leased under the same lease id (the batch is built anew for each try). One the writer holds (an earlier try, or
    // the batch before a rejoin, handed it over) is taken in already.
    const docs: DeliveryDoc[] = [];
    const firsts = new Map<string, FirstAttempt>();
    const reserved = new Set<string>();
    /** The leased deliveries that go in under an earlier try's lease id, and until when that lease may be reused. */
    const reused = new Map<string, number>();
    for (const offered of given) {
      if (writer?.has(offered._id)) continue;
      const earlier = this.unstored.get(offered._id);
      if (earlier) {
        clearTimeout(earlier.timer);
        this.unstored.delete(offered._id);
        if (earlier.first) {
          docs.push(earlier.doc);
          firsts.set(offered._id, earlier.first);
          continue;
        }
      }
      // Without a slot a delivery goes in pending; an earlier try's leased insert that landed is then taken over.
      if (!holder || !offered.body || !holder.reserve(offered.endpointId)) {
        docs.push(offered);
        continue;
      }
      // An earlier try's lease is reused while an attempt started now ends within it, on the clock that set its end.
      // Later the delivery goes in under a new lease: one that landed is then found `existed` and taken over once its
      // lease ran out, late but sent once. It still makes no first attempt: it may be stored already.
      const reuse = earlier && now < earlier.reuseUntil ? earlier : undefined;
      if (reuse) reused.set(reuse.doc._id, reuse.reuseUntil);
      const doc = reuse?.doc ?? offered;
      docs.push(doc);
      const first =
        !earlier &&
        fresh.has(doc._id) &&
        this.options.firstAttemptWaitMs > 0 &&
        !holder.isSlow(doc.endpointId) &&
        !this.recent.has(doc._id);
      if (first) {
        firsts.set(doc._id, holder.sendFirst(doc));
      } else reserved.add(doc._id);
    }
    const answers = await this.answersWithin(firsts, this.options.firstAttemptWaitMs);
    // Those answered in time go in with their outcome; the others, leased.
    const leased = new Set(reserved);
    const withOutcome = new Set<string>();
    const toInsert = docs.map((doc) => {
      const answer = answers.get(doc._id);
      if (answer) {
        withOutcome.add(doc._id);
        return answer;
      }
      if (firsts.has(doc._id)) {
        leased.add(doc._id);
        if (!answers.has(doc._id)) holder?.markSlow(doc.endpointId);
      }
      return doc;
    });
    // Those with their outcome go to the writer, when there is one: the batch inserts the rest.
    const behind = writer ? toInsert.filter((doc) => withOutcome.has(doc._id)) : [];
    if (writer && behind.length > 0) {
      const written = writer.add(behind);
      for (const doc of behind) {
        this.recent.set(doc._id, true);
        firsts.get(doc._id)?.decide('stored', written);
      }
    }
    const rest = behind.length > 0 ? toInsert.filter((doc) => !withOutcome.has(doc._id)) : toInsert;
    let inserted: Set<string>;
    try {
      inserted =
        rest.length > 0 || !writer
          ? await this.store.insertNew(rest, leased.size > 0 ? { ids: leased, until } : undefined)
          : new Set();
    } catch (err) {
      for (const doc of docs) if (reserved.has(doc._id)) holder?.release(doc.endpointId);
      for (const doc of rest) {
        const first = firsts.get(doc._id);
        // The deadline stays the one of the try that chose the lease id: a later try sets a later lease end on the
        // document, but the delivery may be stored with the first one's.
        const reuseUntil = first ? Infinity : (reused.get(doc._id) ?? until.getTime() - (holder?.attemptMs ?? 0));
        if (first || leased.has(doc._id)) this.keepUnstored(doc, first, reuseUntil);
      }
      throw err;
    }
    // Adopt, or say what became of the first attempts.
    const adopted = new Set<string>();
    for (const doc of rest) {
      this.recent.set(doc._id, true);
      const first = firsts.get(doc._id);
      const isNew = inserted.has(doc._id);
      if (first) {
        first.decide(!isNew ? 'existed' : withOutcome.has(doc._id) ? 'stored' : 'leased');
        if (isNew && !withOutcome.has(doc._id)) adopted.add(doc._id);
        if (!isNew) withOutcome.delete(doc._id);
        continue;
      }
      if (!reserved.has(doc._id)) continue;
      if (isNew) {
        holder?.adopt(doc);
        adopted.add(doc._id);
      } else holder?.release(doc.endpointId);
    }
    if ([...inserted].some((id) => !adopted.has(id) && !withOutcome.has(id))) this.onWork();
    for (const doc of behind) inserted.add(doc._id);
    return { inserted, adopted, withOutcome };
  }

  /**
   * The first attempts answered within `waitMs`: the delivery to store with its outcome, or undefined for one that was
   * not sent. Those still waiting are absent.
   */
  private async answersWithin(
    firsts: ReadonlyMap<string, FirstAttempt>,
    waitMs: number,
  ): Promise<Map<string, DeliveryDoc | undefined>> {
    const answers = new Map<string, DeliveryDoc | undefined>();
    if (firsts.size === 0) return answers;
    const all = Promise.all(
      [...firsts].map(async ([id, first]) => {
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
   * A leased one goes in again under its lease id only until `reuseUntil`; it is kept after that all the same, so that
   * the next try makes no first attempt for a delivery that may be stored.
   */
  private keepUnstored(doc: DeliveryDoc, first: FirstAttempt | undefined, reuseUntil: number): void {
    const timer = setTimeout(() => {
      this.unstored.delete(doc._id);
      first?.decide('dropped');
    }, UNSTORED_KEEP_MS);
    timer.unref();
    this.unstored.set(doc._id, { doc, first, reuseUntil, timer });
  }
}
