import { HEADERS } from '@vigil/proto';
import type { Producer } from 'kafkajs';
import type { Logger } from 'pino';
import { eventOf, type EventStore } from '../store/event-store';

export interface OutboxRelayOptions {
  store: EventStore;
  producer: Producer;
  topic: string;
  log: Logger;
  /** Idle poll interval, milliseconds; `wake()` cuts it short after a local append. */
  pollMs: number;
  /** Pause between back-to-back batches, milliseconds. */
  minGapMs: number;
  batchSize: number;
  onPublished?: (count: number) => void;
}

/**
 * Publishes unpublished events in `_id` order (which is stream order: see EventStore.stage) to the events topic, key =
 * stream, then marks them published. The producer is idempotent with one request in flight, so a batch lands in
 * order; a crash between send and mark publishes the same events again with the same ids, which consumers dedupe.
 */
export class OutboxRelay {
  private running = false;
  private loop?: Promise<void>;
  private wakeUp?: () => void;
  private pending = false;

  constructor(private readonly options: OutboxRelayOptions) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Publish soon: called after local appends. */
  wake(): void {
    this.pending = true;
    this.wakeUp?.();
  }

  /** Stops after the current batch; with `flush`, first publishes whatever is unpublished now. */
  async stop({ flush = false }: { flush?: boolean } = {}): Promise<void> {
    if (flush && this.running) {
      try {
        while ((await this.publishBatch()) > 0);
      } catch (err) {
        this.options.log.warn({ err }, 'outbox flush failed');
      }
    }
    this.running = false;
    this.wakeUp?.();
    await this.loop;
  }

  /** One batch; returns how many events it published. */
  async publishBatch(): Promise<number> {
    const { store, producer, topic, batchSize } = this.options;
    const docs = await store.unpublished(batchSize);
    if (docs.length === 0) return 0;
    this.options.log.debug({ count: docs.length, first: docs[0]?._id }, 'outbox batch found');
    await producer.send({
      topic,
      acks: -1,
      messages: docs.map(eventOf).map((event) => ({
        key: event.stream,
        value: JSON.stringify(event),
        headers: { [HEADERS.eventId]: event.id, [HEADERS.eventType]: event.type },
      })),
    });
    await store.markPublished(docs.map((doc) => doc._id));
    this.options.log.debug({ count: docs.length }, 'outbox batch published');
    this.options.onPublished?.(docs.length);
    return docs.length;
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (this.running) {
      this.pending = false;
      let published = 0;
      try {
        published = await this.publishBatch();
        failures = 0;
      } catch (err) {
        failures += 1;
        this.options.log.warn({ err, failures }, 'outbox relay batch failed');
      }
      if (!this.running) break;
      if (failures === 0 && (published === this.options.batchSize || this.pending)) {
        // Under load, a short gap lets a batch fill instead of paying one scan per event.
        if (this.options.minGapMs > 0) await new Promise((resolve) => setTimeout(resolve, this.options.minGapMs));
        continue;
      }
      const delay = failures > 0 ? Math.min(this.options.pollMs * 2 ** failures, 5000) : this.options.pollMs;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = undefined;
    }
  }
}
