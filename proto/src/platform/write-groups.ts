import DataLoader from 'dataloader';
import type { Gathering } from './gathering';

/**
 * Group commit: writes of one kind asked for by concurrent callers go to the store as one command. A write asked for
 * while an earlier group is in flight waits for it, and goes in the next group with every other asked for meanwhile;
 * one asked for with nothing in flight goes at once (after the current turn of the event loop, which gathers what
 * that turn asks for). So under load a group holds what arrived during one round trip, and each record costs a share
 * of a command instead of a command: the store's cost is mostly per command (a round trip, a transaction, a commit),
 * not per document. dataloader does the gathering; `write` answers each item in order, with a value or an Error.
 */
export class WriteGroups<T, R> {
  private readonly loader: DataLoader<T, R>;
  /** The group in flight (settled when none is). */
  private inFlight: Promise<unknown> = Promise.resolve();
  /** Writes of the group being gathered that no Gathering writer asked for: such a group does not wait. */
  private others = 0;
  /** Ends the wait of the group being gathered (a write of another caller joined it). */
  private wake: (() => void) | undefined;

  /**
   * @param gathering Writers on their way here (the commands of one fetch): a group waits for them, within the
   * Gathering's bound, unless a write of another caller is in it.
   */
  constructor(
    write: (items: readonly T[]) => Promise<Array<R | Error>>,
    maxGroup: number,
    private readonly gathering?: Gathering,
  ) {
    this.loader = new DataLoader<T, R>(
      (items) => {
        this.others = 0;
        this.wake = undefined;
        const running = write(items);
        this.inFlight = running.catch(() => undefined);
        return running;
      },
      {
        cache: false,
        maxBatchSize: maxGroup,
        // A new group is dispatched once the one in flight when it opened has settled, and the writers expected have
        // joined it (or the Gathering's bound is over).
        batchScheduleFn: (dispatch) => {
          const openedAt = Date.now();
          void this.inFlight.then(() => this.gathered(openedAt)).then(() => setImmediate(dispatch));
        },
      },
    );
  }

  private gathered(openedAt: number): Promise<void> | undefined {
    const gathering = this.gathering;
    if (!gathering || this.others > 0) return undefined;
    return new Promise<void>((resolve) => {
      this.wake = resolve;
      void gathering.settled(openedAt).then(resolve);
    });
  }

  /** Writes `item` with whatever else is asked for meanwhile; the value `write` answered for it. */
  write(item: T): Promise<R> {
    if (this.gathering && !this.gathering.arrive()) {
      this.others += 1;
      this.wake?.();
    }
    return this.loader.load(item);
  }
}
