import type { DomainEvent } from '@vigil/proto';
import type { Message, Producer } from 'kafkajs';
import type { Logger } from 'pino';
import { backoffMs, assertConfirmed, WakeablePause } from '@vigil/proto/platform';
import type { OutboxSignal } from '../service/outbox-signal';
import type { DeadLetterStore } from '../store/dead-letter-store';
import type { OutboxDoc, OutboxStore } from '../store/outbox-store';
import { SLOT_MS } from '../store/outbox-slots';
import { HandOver, toMessage } from './hand-over';
import { APPEND_BOUND_MS, OutboxSweep } from './outbox-sweep';
import { RemovalQueue } from './removal-queue';
import type { IngestBackpressure } from '../ingest/ingest-consumer';
import { messageRejection } from '../kafka/kafka-errors';

/** While events handed over in memory keep the relay busy, the store's outbox is swept once per this many polls. */
const SWEEP_UNDER_LOAD = 10;
/** Default bound on the events waiting in memory, bytes of their messages. */
const MEMORY_BYTES = 8 * 1024 * 1024;
/**
 * A routine sweep reads another process's slots only once their second is this long over (or `pollMs`, if longer):
 * before, they are most likely published there, their removal waiting (RemovalQueue).
 */
const OTHERS_GRACE_MS = 3_000;

export interface OutboxRelayOptions {
  outbox: OutboxStore;
  deadLetters: DeadLetterStore;
  /**
   * Makes an idempotent producer with one request in flight; the relay owns it. A new one replaces it after the broker
   * refused part of a request: kafkajs then rolls back the sequence numbers of every partition in the request, also of
   * those the broker accepted, and the old producer would fail with OUT_OF_ORDER_SEQUENCE_NUMBER from then on.
   */
  createProducer: () => Producer;
  topic: string;
  log: Logger;
  /**
   * Interval of the outbox sweep, milliseconds: the read of unpublished events in the store, which finds what the
   * in-process path did not publish (events of a crashed or stopped process, a failed send). `wake()` cuts it short.
   */
  pollMs: number;
  /**
   * Longest interval of the sweep while sweeps find nothing, milliseconds (default `pollMs`: no backing off). Each
   * empty routine sweep doubles the interval from `pollMs` up to this; a wake-up or a sweep that publishes brings it
   * back to `pollMs`. This process's own appends do not: they are published from memory, and the sweep is for what
   * others left. A process then reads the store's outbox every few seconds, not every second, busy or quiet, and a
   * crashed process's events are picked up within this plus the grace for others' fresh appends.
   */
  sweepMaxMs?: number;
  /** Pause between back-to-back batches, milliseconds. */
  minGapMs: number;
  batchSize: number;
  /**
   * Bound on the events handed over and waiting in memory, bytes of their messages (default 8 MiB). Past it, appends
   * are left in the store's outbox, and the relay sweeps them from there until it has caught up.
   */
  memoryBytes?: number;
  onPublished?: (count: number) => void;
  /** See APPEND_BOUND_MS (the default); tests shorten it. */
  appendBoundMs?: number;
  /** An event was set aside; `reason` is from a bounded set. */
  onDeadLetter?: (reason: string) => void;
}

/**
 * Events appended by this process are handed over in memory (`appended`, the service's OutboxSignal) and published
 * without reading them back. The store's outbox (see OutboxStore) stays the record of what is still to publish: a
 * marker per process and second in which it appended (a slot), inserted before the slot's first event, which the
 * events carry. Once a slot's second is over, no append of it is in flight and all its events are published, its
 * marker is removed (RemovalQueue: the markers of a second or so in one delete). So a record costs no outbox write of
 * its own. The periodic sweep reads the markers and publishes the events of the slots the in-memory path did not see
 * to (a crashed or stopped process, a failed send or append), read by equality on their slot, marked `vigil-replayed`;
 * it leaves alone the slots and events in flight here. Several processes may publish the same event (their sweeps
 * race), which consumers dedupe. Memory is bounded (`memoryBytes`): a relay that falls behind reads further appends
 * back from the store, slot by slot, in order, until it has caught up.
 *
 * Publishes events in `_id` order (which is stream order: see EventStore.stage) to the events topic, key = stream. The
 * producer is idempotent with one request in flight, so a batch lands in order; a crash between send and the marker's
 * removal publishes the same events again with the same ids, which consumers dedupe.
 *
 * No event can hold the outbox: when the broker refuses a batch because of a message in it (too large, invalid), the
 * batch is sent again one event at a time, in order, so the refused events are found without blaming their
 * neighbours (a batch can also be refused only for its total size, and then every event passes alone). An event
 * refused alone is set aside (DeadLetterStore: recorded with its reason, out of the outbox, counted, logged without
 * content) and the relay moves on. Later events of the same stream are still published: consumers need no event of a
 * stream to act on a later one (a webhook body comes from its own event's view, or from the projections, which include
 * the refused event), so holding the stream would cost its tenant webhooks and gain nothing. Failures that are not about a
 * message (broker away, authorization) set nothing aside: the batch is retried with backoff.
 */
export class OutboxRelay implements IngestBackpressure, OutboxSignal {
  private running = false;
  private loop?: Promise<void>;
  private readonly pause = new WakeablePause();
  private pending = false;
  private producer?: Producer;
  /** Events appended by this process, waiting in memory (bounded), or the outbox slots past the bound. */
  private readonly handOver: HandOver;
  private lastSweep = 0;
  /** Routine sweeps in a row that found nothing to publish (see `sweepMaxMs`). */
  private emptySweeps = 0;
  private backlog = false;
  /** Markers and copies still to take out of the store's outbox, oldest first. */
  private readonly removals: RemovalQueue;
  /** What a sweep reads from the store's outbox: slots' events and old copies. */
  private readonly sweep: OutboxSweep;

  constructor(private readonly options: OutboxRelayOptions) {
    this.removals = new RemovalQueue(options.outbox, options.log);
    this.handOver = new HandOver(options.memoryBytes ?? MEMORY_BYTES, (id) => options.outbox.slots.slotOf(id));
    this.sweep = new OutboxSweep({
      outbox: options.outbox,
      handOver: this.handOver,
      removals: this.removals,
      batchSize: options.batchSize,
      appendBoundMs: options.appendBoundMs ?? APPEND_BOUND_MS,
      log: options.log,
    });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Publish soon: called after local appends. */
  wake(): void {
    this.pending = true;
    this.emptySweeps = 0;
    this.pause.wake();
  }

  /** Takes events this process just appended, to publish them without reading them back from the store. */
  appended(events: readonly DomainEvent[]): void {
    if (!this.running || events.length === 0) {
      this.wake();
      return;
    }
    this.handOver.add(events);
    this.pause.wake();
  }

  /**
   * One batch from the oldest overflow slot (an equality read of a second's events, of which those not published yet);
   * a slot that gives less than a batch is done. Returns how many events it took out. The memory bound is lifted once
   * every slot is done.
   */
  private async publishOverflow(): Promise<number> {
    const { outbox } = this.options;
    const slot = this.handOver.oldestSlot();
    if (slot === undefined) {
      this.handOver.liftIfCaughtUp();
      return 0;
    }
    const docs = (await outbox.slotEvents(slot)).filter(
      (doc) => outbox.slots.isPending(doc._id) && !this.handOver.has(doc._id),
    );
    const batch = docs.slice(0, this.options.batchSize);
    // A failed publish leaves the slot first in line: the next turn reads it again.
    const published = await this.publishDocs(batch);
    if (docs.length <= this.options.batchSize) this.handOver.slotDone();
    this.handOver.liftIfCaughtUp();
    return published;
  }

  /**
   * Back-pressure for the ingest consumer: resolves true once appends can go on without outrunning the relay, false
   * after `maxWaitMs` without room. Under overload, moderating faster than the relay publishes only moves the
   * backlog from Kafka's ingest topic (where it costs nothing) into the store's outbox (where reading it does).
   */
  async room(maxWaitMs: number): Promise<boolean> {
    if (!this.running) return true;
    return this.handOver.room(maxWaitMs);
  }

  /** Bytes of the events waiting in memory (bounded by `memoryBytes`). */
  get memoryQueued(): number {
    return this.handOver.bytes;
  }

  /** Stops after the current batch; with `flush`, first publishes whatever is unpublished now. */
  async stop({ flush = false }: { flush?: boolean } = {}): Promise<void> {
    if (flush && this.running) {
      try {
        while ((await this.publishQueued()) > 0);
        while (this.handOver.slotsLeft > 0) await this.publishOverflow();
        while ((await this.publishBatch()) > 0);
      } catch (err) {
        this.options.log.warn({ err }, 'outbox flush failed');
      }
    }
    this.running = false;
    this.pause.wake();
    await this.loop;
    // The current second's slot closes when it ends; its marker goes with the others rather than wait for a sweep.
    const closesIn = this.options.outbox.slots.closesIn();
    if (flush && closesIn <= SLOT_MS) await new Promise((resolve) => setTimeout(resolve, closesIn + 1));
    this.queueRemovableMarkers();
    await this.removals.remove({ all: true });
    await this.resetProducer();
  }

  /**
   * One sweep of the store's outbox: the events of the slots its markers name, and the copies in it, published marked
   * `vigil-replayed`; returns how many events it took out (published or set aside). With `minAgeMs`, slots whose
   * second ended less than that ago and copies younger than that are left for now: they are most likely in flight in
   * the process that appended them; this process's own slots wait OWN_GRACE_MS.
   */
  async publishBatch({ minAgeMs = 0 }: { minAgeMs?: number } = {}): Promise<number> {
    const now = Date.now();
    const { docs, copies, read } = await this.sweep.gather(minAgeMs, now);
    const published = await this.publishDocs(docs, { replayed: true, copies });
    this.sweep.settle(read);
    return published;
  }

  /** Markers of this process's slots that are closed and published, queued for removal. */
  private queueRemovableMarkers(): void {
    this.removals.add(this.options.outbox.slots.takeRemovable().map((slot) => ({ _id: slot })));
  }

  /**
   * One batch of the events handed over in memory. On failure, those not published go back to the front of the
   * queue, in order, and the next turn (after its backoff) sends them again: a broker away for a moment holds them in
   * memory rather than leave them to a sweep, which waits out OWN_GRACE_MS. A send that failed may have written them
   * all the same; the second copy has the same event ids, which consumers dedupe.
   */
  private async publishQueued(): Promise<number> {
    const entries = this.handOver.take(this.options.batchSize);
    try {
      const published = await this.publishDocs(
        entries.map((entry) => entry.doc),
        { messages: entries.map((entry) => entry.message) },
      );
      this.handOver.release(entries);
      return published;
    } catch (err) {
      const { slots } = this.options.outbox;
      const unpublished = entries.filter((entry) => slots.isPending(entry.doc._id));
      this.handOver.release(entries.filter((entry) => !slots.isPending(entry.doc._id)));
      this.handOver.putBack(unpublished);
      throw err;
    }
  }

  /**
   * Publishes events in one batch. `replayed`: a sweep's (see toMessage); `copies`: the ids of those read from outbox
   * copies, which are taken out once published (the others leave their slot's marker when their slot is done).
   */
  private async publishDocs(
    docs: OutboxDoc[],
    {
      replayed = false,
      copies = new Set<string>(),
      messages = docs.map((doc) => toMessage(doc, replayed)),
    }: { replayed?: boolean; copies?: ReadonlySet<string>; messages?: Message[] } = {},
  ): Promise<number> {
    const { log } = this.options;
    if (docs.length === 0) return 0;
    log.debug({ count: docs.length, first: docs[0]?._id }, 'outbox batch found');
    try {
      await this.send(messages);
    } catch (err) {
      // Whatever failed, the next send goes through a new producer (a new producer id, sequences from 0). kafkajs
      // rolls back the sequence numbers of every partition of a failed request, those the broker wrote included; a
      // later batch of as many messages to such a partition would then reuse a written batch's sequences, and the
      // broker would take it for that batch's retry and drop it while answering success. Re-sending under a new id
      // can only duplicate, which consumers drop by event id.
      await this.resetProducer();
      if (!messageRejection(err)) throw err;
      log.warn({ err, count: docs.length }, 'outbox batch refused by the broker, sending its events one by one');
      return this.publishEach(docs, messages, copies);
    }
    this.done(docs, copies);
    log.debug({ count: docs.length }, 'outbox batch published');
    this.options.onPublished?.(docs.length);
    return docs.length;
  }

  /** Sends each event alone, in order, setting aside those the broker refuses. */
  private async publishEach(docs: OutboxDoc[], messages: Message[], copies: ReadonlySet<string>): Promise<number> {
    const { log } = this.options;
    const sent: OutboxDoc[] = [];
    const flush = () => {
      this.done(sent, copies);
      this.options.onPublished?.(sent.length);
      sent.length = 0;
    };
    for (const [index, doc] of docs.entries()) {
      const message = messages[index]!;
      try {
        await this.send([message]);
        sent.push(doc);
        continue;
      } catch (err) {
        const reason = messageRejection(err);
        await this.resetProducer();
        // Not about this event: what went out so far is marked, the rest waits for the retry of the batch.
        if (!reason) {
          flush();
          throw err;
        }
        const bytes = Buffer.byteLength(message.value as string);
        await this.options.deadLetters.setAside({ event: doc, reason, error: errorType(err), bytes });
        this.options.outbox.slots.published([doc._id]);
        // Ids, type, size and reason only: the event's content stays in the store.
        log.error(
          { eventId: doc._id, tenantId: doc.tenantId, stream: doc.stream, type: doc.type, bytes, reason },
          'outbox event refused by the broker, set aside',
        );
        this.options.onDeadLetter?.(reason);
      }
    }
    flush();
    return docs.length;
  }

  /** Published events: their copies queued for removal, their slots told (see SlotBook.published). */
  private done(docs: readonly OutboxDoc[], copies: ReadonlySet<string>): void {
    this.removals.add(docs.filter((doc) => copies.has(doc._id)));
    this.options.outbox.slots.published(docs.map((doc) => doc._id));
  }

  private async send(messages: Message[]): Promise<void> {
    this.producer ??= await this.connectProducer();
    const results = await this.producer.send({ topic: this.options.topic, acks: -1, messages });
    // kafkajs can resolve a send whose moved partition it never wrote (see assertConfirmed): then it is sent again.
    assertConfirmed([{ topic: this.options.topic, messages }], results);
  }

  private async connectProducer(): Promise<Producer> {
    const producer = this.options.createProducer();
    await producer.connect();
    return producer;
  }

  private async resetProducer(): Promise<void> {
    const old = this.producer;
    this.producer = undefined;
    await old
      ?.disconnect()
      .catch((err: unknown) => this.options.log.warn({ err }, 'outbox producer disconnect failed'));
  }

  /** The routine sweep's interval now: `pollMs`, doubled per empty sweep in a row up to `sweepMaxMs`. */
  sweepIntervalMs(): number {
    const { pollMs, sweepMaxMs = pollMs } = this.options;
    return Math.max(pollMs, Math.min(sweepMaxMs, pollMs * 2 ** Math.min(this.emptySweeps, 20)));
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (this.running) {
      const woken = this.pending;
      this.pending = false;
      let published = 0;
      let full = false;
      try {
        if (this.handOver.length > 0) {
          published = await this.publishQueued();
          full = this.handOver.length > 0;
        } else if (this.handOver.overflowing) {
          // What went past the memory bound follows what was queued before it, slot by slot, in order.
          published = await this.publishOverflow();
          full = this.handOver.overflowing;
        }
        // The sweep reads the whole outbox, those queued here included: it runs when the queue is idle, under sustained
        // load only every SWEEP_UNDER_LOAD polls, and not while overflow slots are read (the outbox is long then).
        const sinceSweep = Date.now() - this.lastSweep;
        const sweep =
          woken ||
          (!this.handOver.overflowing &&
            ((published === 0 && (this.backlog || sinceSweep >= this.sweepIntervalMs())) ||
              sinceSweep >= this.options.pollMs * SWEEP_UNDER_LOAD));
        if (sweep) {
          this.lastSweep = Date.now();
          // Woken (a replay, a test) means now; a routine sweep leaves other processes' fresh appends to them.
          const swept = await this.publishBatch({
            minAgeMs: woken ? 0 : Math.max(this.options.pollMs, OTHERS_GRACE_MS),
          });
          published += swept;
          // A full sweep means more is waiting (a crashed process's events): the next idle turn sweeps again.
          this.backlog = swept >= this.options.batchSize;
          this.emptySweeps = swept === 0 && published === 0 ? this.emptySweeps + 1 : 0;
          full ||= this.backlog;
        }
        failures = 0;
      } catch (err) {
        failures += 1;
        this.options.log.warn({ err, failures }, 'outbox relay batch failed');
      }
      this.handOver.releaseWaiters();
      this.queueRemovableMarkers();
      await this.removals.remove();
      if (!this.running) break;
      if (failures === 0 && (full || this.pending || this.handOver.overflowing || this.handOver.length > 0)) {
        // Under load, a short gap lets a batch fill instead of paying one scan per event.
        if (this.options.minGapMs > 0) await new Promise((resolve) => setTimeout(resolve, this.options.minGapMs));
        continue;
      }
      // After failures the wait grows from twice the poll interval up to 5 s (with jitter); `wake()` still cuts it short.
      const delay = Math.min(
        failures > 0
          ? backoffMs({ initialMs: this.options.pollMs * 2, maxMs: 5000 }, failures)
          : Math.max(0, this.lastSweep + this.sweepIntervalMs() - Date.now()),
        this.removals.dueIn(),
        // The current second's slot, when done but for its second, closes then.
        this.options.outbox.slots.closesIn(),
      );
      this.options.log.debug({ delayMs: delay, slots: this.options.outbox.slots.size }, 'outbox relay waiting');
      await this.pause.sleep(delay);
    }
    // Not published from memory: their slots' markers stay for the next sweep, here or elsewhere.
    this.handOver.clear();
  }
}

/** The broker's error name when there is one (`MESSAGE_TOO_LARGE`), else the error's class name. */
function errorType(err: unknown): string {
  for (let current: unknown = err, depth = 0; current && depth < 5; depth += 1) {
    const { type } = current as { type?: unknown };
    if (typeof type === 'string') return type;
    current = (current as { cause?: unknown }).cause;
  }
  return err instanceof Error ? err.name : 'unknown';
}
