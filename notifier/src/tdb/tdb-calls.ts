import { tdbTokenContext, type SecretBox, type TdbAttempt, type TdbConfigDoc, type TdbStatement } from '@vigil/proto';
import type { Logger } from 'pino';
import type { DueJobs } from '../queue/due-jobs';
import type { TdbOutcome } from '../store/tdb-store';
import { onlyPuidRefused, type TdbClient } from './tdb-client';
import type { TdbRetryDoc } from './tdb-docs';

export interface TdbCallsOptions {
  client: TdbClient;
  /** Opens tenants' tokens; present whenever a call is made (TdbSubmissions makes none without it). */
  secrets?: SecretBox;
  log: Logger;
  /** The retries' schedule, which says when a statement of a failed call goes again. */
  schedule: Pick<DueJobs<TdbRetryDoc>, 'afterFailure'>;
  /** A call's result per statement (`submitted` or its error), for metrics. */
  onResult?: (result: string, count: number) => void;
}

/** One statement to send: its log document's id, what is sent, and the calls already made for it. */
interface Item {
  id: string;
  payload: TdbStatement;
  attemptCount: number;
}

/** A call's result for each of its statements, in order, and the attempt to record (none when no call was made). */
export interface CallOutcome {
  attempt?: TdbAttempt;
  outcomes: Array<{ outcome: TdbOutcome; error?: string }>;
}

/** Tenants whose calls are held back after a failure, remembered at most (the oldest is forgotten first). */
const MAX_HELD_TENANTS = 10_000;

/**
 * The calls to the Transparency Database for TdbSubmissions: one `POST /api/v1/statements` with a tenant's statements,
 * and what its answer makes of each (submitted, failed, or pending until it goes again). A failed call holds the
 * tenant back until its statements are due again, so that its new statements wait for that retry instead of calling a
 * database that just failed; an answer with the statements created lets it go.
 */
export class TdbCalls {
  /** Tenant → until when its new statements join retries rather than calls (its last call failed). */
  private readonly heldUntil = new Map<string, number>();

  constructor(private readonly options: TdbCallsOptions) {}

  /** Until when (epoch milliseconds) the tenant is held back after a failed call; undefined when it is not. */
  heldBackUntil(tenantId: string): number | undefined {
    const until = this.heldUntil.get(tenantId);
    return until !== undefined && until > Date.now() ? until : undefined;
  }

  /**
   * One call with a tenant's statements; what became of each. Never throws: an answer that cannot be processed counts
   * as a failed call (`processing_failed`), made again on the schedule like any other.
   */
  async call(config: TdbConfigDoc, items: Item[]): Promise<CallOutcome> {
    const at = new Date();
    try {
      return await this.callOnce(config, items, at);
    } catch (err) {
      const log = this.options.log.child({ tenantId: config._id, statements: items.length });
      log.error({ error: errorName(err) }, 'transparency database answer could not be processed');
      const attempt = {
        at,
        durationMs: Date.now() - at.getTime(),
        batchSize: items.length,
        error: 'processing_failed',
      };
      return this.failed(config._id, items, attempt, log);
    }
  }

  private async callOnce(config: TdbConfigDoc, items: Item[], at: Date): Promise<CallOutcome> {
    const { client, secrets } = this.options;
    const tenantId = config._id;
    const log = this.options.log.child({ tenantId, statements: items.length });
    const opened = secrets!.open(config.sealed, tdbTokenContext(tenantId));
    if (!opened.ok) {
      log.error({ problem: opened.problem }, 'transparency database token cannot be opened (SECRETS_ENCRYPTION_KEY)');
      return this.failed(
        tenantId,
        items,
        { at, durationMs: 0, batchSize: items.length, error: 'token_unreadable' },
        log,
      );
    }
    const target = { baseUrl: config.baseUrl, token: opened.plaintext };
    const result = await client.submit({ ...target, statements: items.map((item) => item.payload) });
    const attempt: TdbAttempt = {
      at,
      durationMs: result.durationMs,
      batchSize: items.length,
      ...(result.statusCode !== undefined ? { statusCode: result.statusCode } : {}),
    };
    if (result.kind === 'created') {
      this.heldUntil.delete(tenantId);
      this.options.onResult?.('submitted', items.length);
      log.info({ durationMs: result.durationMs }, 'statements submitted');
      const outcomes = items.map((item): { outcome: TdbOutcome } => {
        const tdbUuid = result.uuids.get(item.payload.puid);
        return { outcome: { state: 'submitted', ...(tdbUuid ? { tdbUuid } : {}) } };
      });
      return { attempt, outcomes };
    }
    if (result.kind === 'failed') {
      return this.failed(tenantId, items, { ...attempt, error: result.error }, log, result.retryAfterMs);
    }
    // Refused: the database stored none of the call's statements. Those refused for their puid alone are stored
    // already; those refused for anything else are failed (retrying sends the same statement); the others go again at
    // once (the attempt still counts towards the schedule).
    let rejected = 0;
    const outcomes = await Promise.all(
      items.map(async (item, index): Promise<{ outcome: TdbOutcome; error?: string }> => {
        const fields = result.errors.get(index);
        if (!fields) {
          return { outcome: this.nextState(item, true), error: 'batch_refused' };
        }
        if (onlyPuidRefused(fields) && (await client.exists({ ...target, puid: item.payload.puid })) === true) {
          return { outcome: { state: 'submitted', alreadyStored: true }, error: 'duplicate' };
        }
        rejected += 1;
        return { outcome: { state: 'failed', rejection: fields }, error: 'rejected' };
      }),
    );
    if (rejected > 0) {
      this.options.onResult?.('rejected', rejected);
      log.warn({ rejected }, 'statements refused by the transparency database');
    }
    return { attempt, outcomes };
  }

  /** After a failed call: each statement again after the schedule's delay, or failed once it is spent. */
  private failed(
    tenantId: string,
    items: Item[],
    attempt: TdbAttempt,
    log: Logger,
    retryAfterMs?: number,
  ): CallOutcome {
    this.options.onResult?.(attempt.error ?? 'error', items.length);
    let exhausted = 0;
    const outcomes = items.map((item) => {
      const outcome = this.nextState(item, false, retryAfterMs);
      if (outcome.state === 'failed') exhausted += 1;
      return { outcome };
    });
    // The tenant's next statements wait for the retry instead of calling a database that just failed.
    const until = outcomes.find((entry) => entry.outcome.state === 'pending')?.outcome;
    if (until?.state === 'pending') this.hold(tenantId, until.dueAt.getTime());
    log.info(
      { error: attempt.error, statusCode: attempt.statusCode, failed: exhausted },
      exhausted > 0 ? 'statements failed after their retries' : 'transparency database call failed, retrying',
    );
    return { attempt, outcomes };
  }

  private hold(tenantId: string, until: number): void {
    this.heldUntil.delete(tenantId);
    if (this.heldUntil.size >= MAX_HELD_TENANTS) {
      const oldest = this.heldUntil.keys().next();
      if (!oldest.done) this.heldUntil.delete(oldest.value);
    }
    this.heldUntil.set(tenantId, until);
  }

  /**
   * The next state after a failed attempt: pending after the schedule's delay (or at once, `now`, while the schedule
   * lasts), failed once it is spent.
   */
  private nextState(item: Item, now: boolean, retryAfterMs?: number): TdbOutcome {
    const next = this.options.schedule.afterFailure(item.attemptCount + 1, true, retryAfterMs);
    if (next.state === 'failed') return next;
    return { state: 'pending', dueAt: now ? new Date() : next.dueAt };
  }
}

/** An error's class name for a log line: never its message, which may quote what a server answered. */
export function errorName(err: unknown): string {
  return err instanceof Error ? err.name : typeof err;
}
