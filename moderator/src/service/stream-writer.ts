import type { DomainEvent, TenantVersions } from '@vigil/proto';
import { ConflictError } from '../domain/errors';
import type { RecordState } from '../domain/record';
import type { ReportState } from '../domain/report';
import type { Loaded } from '../domain/stream';
import type { UserState } from '../domain/user';
import { retry, type BackoffPolicy } from '@vigil/proto/platform';
import { StreamConflict, type EventStore } from '../store/event-store';
import type { OutboxSignal } from './outbox-signal';

/**
 * Writers of the same stream race on its next version: the loser waits a little (random, so two losers do not meet
 * again at once) and reads again. Short: the winner's commit is one append and a projection write.
 */
const CONFLICT_BACKOFF: BackoffPolicy = { initialMs: 5, maxMs: 100, jitter: 1 };

/**
 * The commit step of every use case: commits staged streams with optimistic concurrency, wakes the outbox relay with
 * what was appended, and runs a whole load → decide → commit again on a conflict.
 */
export class StreamWriter {
  constructor(
    private readonly store: EventStore,
    /** Told of the events a commit appended, so the outbox relay publishes them without reading them back. */
    private readonly outbox: OutboxSignal,
    /** Attempts of one decision under concurrent writers before giving up with ConflictError. */
    private readonly maxAttempts: number,
    /**
     * The tenants' configuration versions this process has seen (on calls and commands): each new event carries its
     * tenant's, so the notifier fans it out to the endpoints of at least that version. Absent, events carry none.
     */
    private readonly versions?: TenantVersions,
    /** Called with the events a commit appended, after it: the after-commit reactions (see `app.ts`). Never throws. */
    private readonly afterCommit?: (events: DomainEvent[]) => Promise<void>,
  ) {}

  /** Commits staged streams and wakes the outbox relay when events were appended. */
  async commit(...streams: Loaded<RecordState | UserState | ReportState>[]): Promise<void> {
    if (this.versions) {
      // Read now, after the call or command that led here was observed: at least the version it carried.
      for (const event of streams.flatMap((stream) => stream.events)) {
        const version = this.versions.of(event.tenantId);
        if (version > 0) event.configVersion = Math.max(event.configVersion ?? 0, version);
      }
    }
    // What the store appended, known even when a write after the append fails (a projection): the relay and the
    // after-commit reactions get those events before the failure goes up, since the retry finds the command applied
    // and appends nothing, so nothing else would hand them over.
    let appended: DomainEvent[] = [];
    const handOver = async () => {
      if (appended.length === 0) return;
      this.outbox.appended(appended);
      await this.afterCommit?.(appended);
    };
    try {
      await this.store.commitTelling(
        (events) => {
          appended = events;
        },
        ...streams,
      );
    } catch (err) {
      await handOver();
      throw err;
    }
    await handOver();
  }

  /**
   * Runs `attempt` (load, decide, commit) until it commits without a conflict; `fresh` asks the loads to read past any
   * cache, since the previous attempt lost to another writer. Throws ConflictError when every attempt lost.
   */
  async retrying<T>(attempt: (fresh: boolean) => Promise<T>): Promise<T> {
    try {
      return await retry((index) => attempt(index > 0), {
        backoff: CONFLICT_BACKOFF,
        maxAttempts: this.maxAttempts,
        retriable: (err) => err instanceof StreamConflict,
      });
    } catch (err) {
      if (err instanceof StreamConflict) {
        throw new ConflictError('too many concurrent writes to the same record, user or report; try again');
      }
      throw err;
    }
  }
}
