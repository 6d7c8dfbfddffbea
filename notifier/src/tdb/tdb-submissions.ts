import {
  MIN_APPEAL_WINDOW_DAYS,
  statementOf,
  TDB_LIMITS,
  tdbEnabledSince,
  type DomainEvent,
  type SecretBox,
  type TdbAttempt,
  type TdbConfigDoc,
  type TdbSubmissionDoc,
} from '@vigil/proto';
import { tdbSubmissionIdOf, type TdbRetryDoc } from './tdb-docs';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { mapInTurns } from '@vigil/proto/platform';
import { submitsToTdb, tdbStatementOf } from './tdb-statement';
import { DueJobs, type DueJobsSettings } from '../queue/due-jobs';
import { isRetriable } from '../store/store-errors';
import { outcomeFields, retryOf, type TdbOutcome, type TdbStore } from '../store/tdb-store';
import type { TdbClient } from './tdb-client';
import { errorName, TdbCalls, type CallOutcome } from './tdb-calls';
import { docWithoutAnswer, outcomeWithoutAnswer, writeLogEntries } from './tdb-log-writes';

/** `concurrency` bounds the calls in flight at once: per batch of events, and for retries. */
export interface TdbSubmissionsOptions extends DueJobsSettings {
  store: TdbStore;
  client: TdbClient;
  /** Opens tenants' tokens (SECRETS_ENCRYPTION_KEY); absent: statements are recorded as skipped, `not_configured`. */
  secrets?: SecretBox;
  /** A call's result per statement (`submitted` or its error), for metrics. */
  onResult?: (result: string, count: number) => void;
  /** Statements set aside, or logged without the database's answer, by reason (SetAsideReason), for metrics. */
  onSetAside?: (reason: SetAsideReason, count: number) => void;
}

/**
 * Why statements were set aside (a log line with their ids and a count, nothing kept to try again), a bounded set:
 * - `unbuildable`: no statement could be built from the event;
 * - `not_queued`: the call failed and its retry could not be stored;
 * - `not_logged`: the store refused the statement's log entry, even without the database's answer;
 * - `processing_failed`: another failure of the tenant's own while its statements were handled;
 * - `answer_not_logged`: the log entry is written, but without the database's answer (its refusal, its id), which the
 *   store refused.
 */
export type SetAsideReason = 'unbuildable' | 'not_queued' | 'not_logged' | 'processing_failed' | 'answer_not_logged';

/** The events whose statements can go to the database: moderations and changes of a user's status. */
export const SUBMITTED_EVENT_TYPES: ReadonlySet<string> = new Set(['RecordModerated', 'UserStatusChanged']);
type SubmittedEvent = Extract<DomainEvent, { type: 'RecordModerated' | 'UserStatusChanged' }>;
const isSubmitted = (event: DomainEvent): event is SubmittedEvent => SUBMITTED_EVENT_TYPES.has(event.type);

/** Statements built between two turns of the event loop: a batch of a few seconds must not hold the webhooks. */
const BUILT_PER_TURN = 32;

/**
 * Submission of statements of reasons to the Transparency Database (Art. 24(5) DSA) for the tenants that turned it on.
 * Its own consumer of the events topic (TdbConsumer) hands over each batch of events, a few seconds' worth: their
 * restricting decisions of tenants with submission on become one `POST /api/v1/statements` per tenant and 100
 * statements, and each statement's log document is written with the call's answer (one insert per call). A failed
 * call's statements go to a retry in MongoDB (`tdb_retries`), which DueJobs make again on the retry schedule; while
 * a tenant's database is failing, its new statements join retries instead of waiting on calls that time out, so one
 * tenant's database never holds the others'.
 *
 * The puid is the decision event's id: a call made again after its answer was lost (a retry, or events consumed again
 * after a crash) is refused for the stored statements' puids, which (confirmed with `existing-puid`) count as
 * submitted.
 *
 * Only the store being out of reach fails a batch (it would fail every tenant alike, and the batch is handled again).
 * A failure of a tenant's or a statement's own never does: an answer that cannot be processed is a failed call,
 * retried on the schedule; a log entry the store refuses is written alone, then without the database's answer; what
 * still fails is set aside, logged by id and counted. So one tenant's answer never stops the others' submission.
 */
export class TdbSubmissions {
  private readonly jobs: DueJobs<TdbRetryDoc>;
  /** The calls themselves, and the hold on a tenant whose last call failed. */
  private readonly calls: TdbCalls;

  constructor(private readonly options: TdbSubmissionsOptions) {
    this.jobs = new DueJobs({ ...options, run: (job) => this.retry(job), close: () => options.client.close() });
    this.calls = new TdbCalls({ ...options, schedule: this.jobs });
  }

  /** Starts making the queued retries. */
  start(): void {
    this.jobs.start();
  }

  stop(): Promise<void> {
    return this.jobs.stop();
  }

  /**
   * Submits the statements these events call for, for tenants with submission on (decisions made since it was turned
   * on), and records each one's outcome; idempotent. Throws only when the store is out of reach (the batch is handled
   * again); a tenant's or a statement's own failure sets its statements aside instead.
   */
  async submit(events: DomainEvent[]): Promise<void> {
    const byTenant = new Map<string, SubmittedEvent[]>();
    for (const event of events) {
      if (!isSubmitted(event)) continue;
      const list = byTenant.get(event.tenantId);
      if (list) list.push(event);
      else byTenant.set(event.tenantId, [event]);
    }
    const calls: Array<() => Promise<void>> = [];
    for (const [tenantId, tenantEvents] of byTenant) {
      const ids = tenantEvents.map((event) => tdbSubmissionIdOf(event.id));
      await this.isolated(tenantId, ids, async () => {
        calls.push(...(await this.prepare(tenantId, tenantEvents)));
      });
    }
    await mapInTurns(calls, this.options.concurrency, (call) => call());
  }

  /**
   * The calls for one tenant's events: its statements, 100 per call; or, without the key that opens the token, none
   * (the statements are recorded as skipped).
   */
  private async prepare(tenantId: string, events: SubmittedEvent[]): Promise<Array<() => Promise<void>>> {
    const { store, secrets, log } = this.options;
    const config = await store.configOf(
      tenantId,
      events.reduce((newest, event) => Math.max(newest, event.configVersion ?? 0), 0),
    );
    if (!config) return [];
    const since = tdbEnabledSince(config).getTime();
    const docs: TdbSubmissionDoc[] = [];
    for (const [index, event] of events.entries()) {
      if (index > 0 && index % BUILT_PER_TURN === 0) await yieldToLoop();
      if (Date.parse(event.occurredAt) < since) continue;
      try {
        const doc = this.docOf(event, config);
        if (doc) docs.push(doc);
      } catch (err) {
        this.setAside(tenantId, [tdbSubmissionIdOf(event.id)], 'unbuildable', err);
      }
    }
    if (docs.length === 0) return [];
    if (!secrets) {
      const now = new Date();
      const skipped = { state: 'skipped', reason: 'not_configured' } as const;
      await this.writeLog(
        tenantId,
        docs.map((doc) => ({ ...doc, ...outcomeFields(skipped, undefined, now) })),
        (doc) => doc._id,
        (list) => store.record(list),
        docWithoutAnswer,
      );
      log.warn({ statements: docs.length }, 'statements not submitted: no SECRETS_ENCRYPTION_KEY');
      return [];
    }
    const calls: Array<() => Promise<void>> = [];
    for (let from = 0; from < docs.length; from += TDB_LIMITS.batch) {
      const chunk = docs.slice(from, from + TDB_LIMITS.batch);
      const ids = chunk.map((doc) => doc._id);
      calls.push(() => this.isolated(tenantId, ids, () => this.submitNew(config, chunk)));
    }
    return calls;
  }

  /**
   * Runs work on a tenant's statements (`ids`). The store out of reach fails it (and so the batch, handled again);
   * any other failure is the tenant's own: its statements are set aside, and the other tenants' go on.
   */
  private async isolated(tenantId: string, ids: string[], work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (err) {
      if (isRetriable(err)) throw err;
      this.setAside(tenantId, ids, 'processing_failed', err);
    }
  }

  /** The log document of the event's statement, before its first call; null when it restricts nothing. */
  private docOf(event: SubmittedEvent, config: TdbConfigDoc): TdbSubmissionDoc | null {
    // The appeal window is not part of what the database receives.
    const statement = statementOf(event, { appealWindowDays: MIN_APPEAL_WINDOW_DAYS });
    if (!statement || !submitsToTdb(statement)) return null;
    const hasImages = event.type === 'RecordModerated' && (event.data.images?.length ?? 0) > 0;
    const now = new Date();
    return {
      _id: tdbSubmissionIdOf(event.id),
      tenantId: event.tenantId,
      eventId: event.id,
      statementId: statement.id,
      subject: statement.subject,
      payload: tdbStatementOf(statement, config, { hasImages }),
      state: 'pending',
      attemptCount: 0,
      attempts: [],
      createdAt: now,
      updatedAt: now,
    };
  }

  /**
   * One call for up to 100 new statements of a tenant, then their log documents in one insert; those to send again go
   * to a retry first (so that a crash in between leaves nothing pending without one), held until the log documents are
   * written (so that the retry never runs before the documents it records its outcome in exist).
   */
  private async submitNew(config: TdbConfigDoc, docs: TdbSubmissionDoc[]): Promise<void> {
    const { store } = this.options;
    const tenantId = config._id;
    const items = docs.map((doc) => ({ id: doc._id, payload: doc.payload, attemptCount: 0 }));
    const heldUntil = this.calls.heldBackUntil(tenantId);
    const result: CallOutcome =
      heldUntil !== undefined
        ? { outcomes: items.map(() => ({ outcome: { state: 'pending', dueAt: new Date(heldUntil) } })) }
        : await this.calls.call(config, items);
    const now = new Date();
    const pending = docs.filter((_, index) => result.outcomes[index]!.outcome.state === 'pending');
    const firstPending = result.outcomes.find((entry) => entry.outcome.state === 'pending')?.outcome;
    let retry: TdbRetryDoc | undefined;
    if (firstPending?.state === 'pending') {
      const job = retryOf(tenantId, pending, result.attempt ? 1 : 0, firstPending.dueAt);
      try {
        retry = await store.queueHeldRetry(job, this.options.leaseMs);
      } catch (err) {
        if (isRetriable(err)) throw err;
        this.setAside(
          tenantId,
          pending.map((doc) => doc._id),
          'not_queued',
          err,
        );
      }
    }
    const batchId = retry?._id;
    const logged = docs.flatMap((doc, index): TdbSubmissionDoc[] => {
      const { outcome, error } = result.outcomes[index]!;
      // Set aside above: a pending entry without its retry would wait for nothing.
      if (outcome.state === 'pending' && batchId === undefined) return [];
      const attempt = result.attempt && { ...result.attempt, ...(error !== undefined ? { error } : {}) };
      return [
        {
          ...doc,
          ...outcomeFields(outcome, attempt, now),
          ...(attempt ? { attempts: [attempt], attemptCount: 1 } : {}),
          ...(outcome.state === 'pending' && batchId ? { batchId } : {}),
        },
      ];
    });
    await this.writeLog(
      tenantId,
      logged,
      (doc) => doc._id,
      (list) => store.record(list),
      docWithoutAnswer,
    );
    if (retry && firstPending?.state === 'pending') await this.release(retry, firstPending.dueAt);
  }

  /**
   * Makes a held retry due once its statements' log documents are written. A failed release is left to the hold's end,
   * when the retry is taken over: the statements go later, none is lost.
   */
  private async release(job: TdbRetryDoc, dueAt: Date): Promise<void> {
    try {
      await this.options.store.releaseRetry(job, dueAt);
    } catch (err) {
      this.options.log.warn(
        { tenantId: job.tenantId, retryId: job._id, error: errorName(err) },
        'transparency database retry not released; it is taken over when its hold ends',
      );
      return;
    }
    if (dueAt.getTime() <= Date.now()) this.jobs.wake();
  }

  /** Makes a queued retry's call (a job of its DueJobs) and records its outcome. */
  async retry(job: TdbRetryDoc): Promise<void> {
    const { store, log } = this.options;
    const config = await store.configOf(job.tenantId);
    const ids = job.submissionIds;
    let attempt: TdbAttempt | undefined;
    let outcomes: Array<{ id: string; outcome: TdbOutcome; error?: string }>;
    if (!config || !this.options.secrets) {
      // Turned off since they were queued, or the deployment lost the key that opens the token.
      const outcome = { state: 'skipped', reason: config ? 'not_configured' : 'disabled' } as const;
      outcomes = ids.map((id) => ({ id, outcome }));
      log.info({ tenantId: job.tenantId, statements: ids.length, reason: outcome.reason }, 'statements not submitted');
    } else {
      const items = ids.map((id, index) => ({ id, payload: job.payloads[index]!, attemptCount: job.attemptCount }));
      const result = await this.calls.call(config, items);
      attempt = result.attempt;
      outcomes = ids.map((id, index) => ({ id, ...result.outcomes[index]! }));
    }
    await this.writeLog(
      job.tenantId,
      outcomes,
      (entry) => entry.id,
      (list) => store.recordOutcomes(job, attempt, list),
      outcomeWithoutAnswer,
    );
    await store.finishRetry(job, attempt, outcomes);
    if (outcomes.some((entry) => entry.outcome.state === 'pending' && entry.outcome.dueAt <= new Date())) {
      this.jobs.wake();
    }
  }

  /** Writes log entries (see writeLogEntries); what could be written only in part, or not at all, is told. */
  private async writeLog<T>(
    tenantId: string,
    entries: T[],
    idOf: (entry: T) => string,
    write: (entries: T[]) => Promise<void>,
    withoutAnswer: (entry: T) => T,
  ): Promise<void> {
    const { answerless, lost, failure } = await writeLogEntries(entries, idOf, write, withoutAnswer);
    if (answerless.length > 0) {
      this.options.log.warn(
        { tenantId, submissionIds: answerless, error: errorName(failure) },
        "statements logged without the transparency database's answer, which the store refused",
      );
      this.options.onSetAside?.('answer_not_logged', answerless.length);
    }
    if (lost.length > 0) this.setAside(tenantId, lost, 'not_logged', failure);
  }

  /** Statements that end neither submitted, nor queued, nor logged: a log line with their ids (no content), a count. */
  private setAside(tenantId: string, submissionIds: string[], reason: SetAsideReason, err: unknown): void {
    this.options.log.error({ tenantId, submissionIds, reason, error: errorName(err) }, 'statements set aside');
    this.options.onSetAside?.(reason, submissionIds.length);
  }
}
