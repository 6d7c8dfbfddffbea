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
 *
 * A batch may hand over work that is still being finished after its handler returned (`written`: writes gathered
 * over several batches). Its offset is noted only once that work is done, and a partition's offsets are noted in
 * order: a later batch's offset never passes an earlier one still waiting, and once a batch's work failed for good
 * (which happens only as the consumer stops), no later offset of its partition is noted: its messages are read again.
 */
export class OffsetCommits {
  private readonly pending = new Map<string, Offset>();
  private timer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  private closing = false;
  /** Per partition, the last batch whose offset waits for its work (or for an earlier batch's): settled true when noted. */
  private readonly queued = new Map<string, Promise<boolean>>();
  /** Partitions whose work failed for good: none of their later offsets is noted. */
  private readonly broken = new Set<string>();

  constructor(
    private readonly consumer: Pick<Consumer, 'commitOffsets'>,
    private readonly intervalMs: number,
    private readonly log: Logger,
  ) {}

  /**
   * Notes that the partition's messages before `offset` are handled. With an interval of 0 it commits now, and a
   * failure is thrown to the caller (kafkajs rejoins the group and re-delivers); otherwise within the interval.
   *
   * With `written`, the offset is noted once it settles (and once every earlier batch of the partition is noted), and
   * this returns at once: a failed commit then is logged, not thrown. While closing, it returns once the offset is
   * committed (or will not be, when `written` failed), so that it is committed before the group is left.
   */
  async handled(topic: string, partition: number, offset: string, written?: Promise<void>): Promise<void> {
    const key = `${topic}\u0000${partition}`;
    // Its failure is handled once the earlier batches are noted; until then it must not count as unhandled.
    written?.catch(() => undefined);
    const before = this.queued.get(key);
    if (!written && !before) {
      if (!this.broken.has(key)) await this.note(key, { topic, partition, offset });
      return;
    }
    const noted = (before ?? Promise.resolve(true)).then(async (earlierNoted) => {
      try {
        await written;
      } catch (err) {
        this.log.warn(
          { err, topic, partition },
          'work of a handled batch not done: its messages will be handled again',
        );
        this.broken.add(key);
        return false;
      }
      if (!earlierNoted || this.broken.has(key)) return false;
      try {
        await this.note(key, { topic, partition, offset });
      } catch (err) {
        this.log.warn({ err, topic, partition }, 'offset commit failed: those batches will be handled again');
      }
      return true;
    });
    this.queued.set(key, noted);
    void noted.then(() => {
      if (this.queued.get(key) === noted) this.queued.delete(key);
    });
    if (this.closing) await noted;
  }

  /** Commits the offset now (interval 0, or closing), or notes it for the next gathered commit. */
  private async note(key: string, { topic, partition, offset }: Offset): Promise<void> {
    if (this.intervalMs === 0 || this.closing) {
      await this.consumer.commitOffsets([{ topic, partition, offset }]);
      return;
    }
    const known = this.pending.get(key);
    if (!known || BigInt(offset) > BigInt(known.offset)) this.pending.set(key, { topic, partition, offset });
    this.timer ??= setTimeout(() => void this.flush(), this.intervalMs);
  }

  /**
   * Commits what was noted, once the batches whose work is still being finished are noted (see `handled`), and from
   * then on each batch at once: call before the consumer disconnects (kafkajs lets the batches in flight finish, and
   * they still commit, before it leaves the group). The work handed over must settle on its own (its owner bounds it).
   */
  async close(): Promise<void> {
    this.closing = true;
    // Batches whose work is still being finished: their offsets are noted (or given up) first.
    await Promise.all([...this.queued.values()]);
    await this.flush();
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
