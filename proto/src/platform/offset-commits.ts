import type { Consumer } from 'kafkajs';
import type { Logger } from 'pino';

interface Offset {
  topic: string;
  partition: number;
  offset: string;
}

/**
 * A consumer's offset commits, gathered: each handled batch notes its next offset, and every `intervalMs` one
 * OffsetCommit request carries the latest offset of every partition handled since (with 0, each batch commits at
 * once). Under load a consumer handles many small batches a second over several partitions; a commit each was one
 * more broker write per batch (to __consumer_offsets) and one more round trip.
 *
 * Nothing is lost either way: an offset is noted only after its batch is handled, so a commit never passes a message
 * not yet done. A crash (or a rebalance, or a failed commit) re-delivers at most `intervalMs` of handled messages,
 * which the consumers' ids make no-ops. An offset noted for a partition that has moved to another member may still
 * be committed: it only says that those messages were handled, which they were.
 */
export class OffsetCommits {
  private readonly pending = new Map<string, Offset>();
  private timer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  private closing = false;

  constructor(
    private readonly consumer: Pick<Consumer, 'commitOffsets'>,
    private readonly intervalMs: number,
    private readonly log: Logger,
  ) {}

  /**
   * Notes that the partition's messages before `offset` are handled. With an interval of 0 it commits now, and a
   * failure is thrown to the caller (kafkajs rejoins the group and re-delivers); otherwise within the interval.
   */
  async handled(topic: string, partition: number, offset: string): Promise<void> {
    if (this.intervalMs === 0 || this.closing) {
      await this.consumer.commitOffsets([{ topic, partition, offset }]);
      return;
    }
    const key = `${topic}\u0000${partition}`;
    const known = this.pending.get(key);
    if (!known || BigInt(offset) > BigInt(known.offset)) this.pending.set(key, { topic, partition, offset });
    this.timer ??= setTimeout(() => void this.flush(), this.intervalMs);
  }

  /**
   * Commits what was noted, and from then on each batch at once: call before the consumer disconnects (kafkajs lets
   * the batches in flight finish, and they still commit, before it leaves the group).
   */
  close(): Promise<void> {
    this.closing = true;
    return this.flush();
  }

  /** Commits what was noted (one request for every partition); a failure is logged, its messages re-delivered. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const offsets = [...this.pending.values()];
    this.pending.clear();
    if (offsets.length === 0) return this.flushing;
    this.flushing = this.flushing.then(() =>
      this.consumer.commitOffsets(offsets).catch((err: unknown) => {
        this.log.warn({ err, partitions: offsets.length }, 'offset commit failed: those batches will be handled again');
      }),
    );
    return this.flushing;
  }
}
