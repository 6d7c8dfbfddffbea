import DataLoader from 'dataloader';

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

  constructor(write: (items: readonly T[]) => Promise<Array<R | Error>>, maxGroup: number) {
    this.loader = new DataLoader<T, R>(
      (items) => {
        const running = write(items);
        this.inFlight = running.catch(() => undefined);
        return running;
      },
      {
        cache: false,
        maxBatchSize: maxGroup,
        // A new group is dispatched once the one in flight when it opened has settled.
        batchScheduleFn: (dispatch) => {
          void this.inFlight.then(() => setImmediate(dispatch));
        },
      },
    );
  }

  /** Writes `item` with whatever else is asked for meanwhile; the value `write` answered for it. */
  write(item: T): Promise<R> {
    return this.loader.load(item);
  }
}
