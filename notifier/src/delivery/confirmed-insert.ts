import { retry, type BackoffPolicy } from '@vigil/proto/platform';
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { DeliveryDoc, DeliveryStore } from '../store/delivery-store';

/**
 * Waits for `done`, `ms` at most (its failure counts as settled: the caller looks at what is left). The timer is
 * cleared once `done` settles.
 */
export async function waitAtMost(done: Promise<unknown>, ms: number): Promise<void> {
  const timer = new AbortController();
  const timeUp = delay(ms, undefined, { signal: timer.signal }).catch(() => undefined);
  await Promise.race([done.catch(() => undefined), timeUp]);
  timer.abort();
}

export interface ConfirmedInsertOptions {
  /** Delays between the tries of an insert that failed. */
  backoff: BackoffPolicy;
  /**
   * Failed tries of the insert after which its deliveries are inserted one at a time, and one the store refuses for a
   * reason of its own (not `retriable`) is dropped.
   */
  isolateAfterAttempts: number;
  /** Whether a failure may pass (the store away, a reply lost). Default: every failure, so nothing is dropped. */
  retriable?: (err: unknown) => boolean;
  /** The caller's give-up: once aborted, the tries end (a sleep between them at once) and the last failure is thrown. */
  giveUp: AbortSignal;
  /** A delivery the store refused for a reason of its own was dropped. */
  onDropped: (doc: DeliveryDoc, err: unknown) => void;
  /** What the log lines of a failed try say besides the error. */
  what: string;
  log: Logger;
}

/**
 * Inserts deliveries (DeliveryStore.insertNew, idempotent: derived ids, and a delivery found stored is not new) and
 * tries again until the insert is confirmed: nothing counts as written before an insert answered. After
 * `isolateAfterAttempts` failed tries the deliveries go in one at a time, so that one the store refuses for a reason
 * of its own is dropped (`onDropped`) and does not hold the others. Returns the ids that were new; throws once
 * `goOn` says to stop.
 */
export async function insertConfirmed(
  store: Pick<DeliveryStore, 'insertNew'>,
  docs: DeliveryDoc[],
  leased: { ids: ReadonlySet<string>; until: Date } | undefined,
  options: ConfirmedInsertOptions,
): Promise<Set<string>> {
  return retry(
    (attempt) =>
      attempt >= options.isolateAfterAttempts
        ? insertEach(store, docs, leased, options)
        : store.insertNew(docs, leased),
    {
      backoff: options.backoff,
      retriable: () => !options.giveUp.aborted,
      onRetry: (err, attempt) => {
        options.log.warn({ err, attempt, deliveries: docs.length }, `${options.what} not written, retrying`);
      },
      sleep: (ms) => delay(ms, undefined, { signal: options.giveUp }),
    },
  );
}

/** Inserts each delivery on its own; one refused for a reason of its own is dropped, any other failure thrown. */
async function insertEach(
  store: Pick<DeliveryStore, 'insertNew'>,
  docs: DeliveryDoc[],
  leased: { ids: ReadonlySet<string>; until: Date } | undefined,
  options: ConfirmedInsertOptions,
): Promise<Set<string>> {
  const { retriable = () => true } = options;
  const inserted = new Set<string>();
  for (const doc of docs) {
    try {
      for (const id of await store.insertNew([doc], leased)) inserted.add(id);
    } catch (err) {
      if (retriable(err)) throw err;
      options.onDropped(doc, err);
    }
  }
  return inserted;
}
