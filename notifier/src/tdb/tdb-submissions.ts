import {
  MIN_APPEAL_WINDOW_DAYS,
  statementOf,
  submitsToTdb,
  TDB_LIMITS,
  tdbStatementOf,
  tdbSubmissionIdOf,
  tdbTokenContext,
  type DomainEvent,
  type SecretBox,
  type TdbAttempt,
  type TdbConfigDoc,
  type TdbSubmissionDoc,
} from '@vigil/proto';
import type { Logger } from 'pino';
import { nextDelayMs } from '../domain/retry-policy';
import { WorkLoop } from '../queue/work-loop';
import type { TdbStore } from '../store/tdb-store';
import { onlyPuidRefused, type TdbClient } from './tdb-client';

export interface TdbSubmissionsOptions {
  store: TdbStore;
  client: TdbClient;
  /** Opens tenants' tokens (SECRETS_ENCRYPTION_KEY); absent: statements are recorded as skipped, `not_configured`. */
  secrets?: SecretBox;
  log: Logger;
  retryScheduleS: readonly number[];
  pollMs: number;
  /** A claimed submission stays ours this long: the call's timeout plus a margin. */
  leaseMs: number;
  /** Calls in flight in this process. */
  concurrency: number;
  /** How long a new statement waits for others to share its call, milliseconds. */
  batchWaitMs: number;
  /** A call's result per statement (`submitted` or its error), for metrics. */
  onResult?: (result: string, count: number) => void;
}

/** The statements of one tenant claimed together: one call carries them. */
export interface Batch {
  _id: string;
  tenantId: string;
  docs: TdbSubmissionDoc[];
}

/**
 * Submission of statements of reasons to the Transparency Database (Art. 24(5) DSA) for the tenants that turned it on.
 * The events consumer plans one document per restricting decision before it commits (`_id` from the event id, so a
 * re-consumed event submits once); a WorkLoop claims due statements up to 100 at a time, sends each tenant's in one
 * `POST /api/v1/statements`, and reschedules failures in MongoDB like the emails and payment actions. The puid is the
 * decision event's id: when a call's answer is lost and the call is made again, the database refuses the stored
 * statements' puids, which (confirmed with `existing-puid`) count as submitted.
 */
export class TdbSubmissions {
  private readonly loop: WorkLoop<Batch>;

  constructor(private readonly options: TdbSubmissionsOptions) {
    const { store, leaseMs } = options;
    this.loop = new WorkLoop<Batch>({
      log: options.log,
      pollMs: options.pollMs,
      concurrency: options.concurrency,
      claimBatch: 1,
      claim: async (now) => batchesOf(await store.claim(now, leaseMs, TDB_LIMITS.batch)),
      process: (batch) => this.submitBatch(batch),
      leases: { leaseMs, prune: (before) => store.pruneLeases(before) },
    });
  }

  /**
   * Records the submissions these events call for, for tenants with submission on (the others: nothing);
   * idempotent. Throws on a database failure (the batch is retried).
   */
  async plan(events: DomainEvent[]): Promise<void> {
    const { store, secrets, log } = this.options;
    const configs = new Map<string, Promise<TdbConfigDoc | null>>();
    const docs: TdbSubmissionDoc[] = [];
    for (const event of events) {
      if (event.type !== 'RecordModerated' && event.type !== 'UserStatusChanged') continue;
      // The appeal window is not part of what the database receives.
      const statement = statementOf(event, { appealWindowDays: MIN_APPEAL_WINDOW_DAYS });
      if (!statement || !submitsToTdb(statement)) continue;
      if (!configs.has(event.tenantId)) configs.set(event.tenantId, store.configOf(event.tenantId));
      const config = await configs.get(event.tenantId);
      if (!config) continue;
      const hasImages = event.type === 'RecordModerated' && (event.data.images?.length ?? 0) > 0;
      const now = new Date();
      docs.push({
        _id: tdbSubmissionIdOf(event.id),
        tenantId: event.tenantId,
        eventId: event.id,
        statementId: statement.id,
        subject: statement.subject,
        payload: tdbStatementOf(statement, config, { hasImages }),
        state: secrets ? 'pending' : 'skipped',
        ...(secrets ? {} : { skipReason: 'not_configured', completedAt: now }),
        attemptCount: 0,
        attempts: [],
        dueAt: new Date(now.getTime() + this.options.batchWaitMs),
        createdAt: now,
        updatedAt: now,
      });
    }
    if (docs.length === 0) return;
    const created = await store.insertNew(docs);
    if (!secrets) log.warn({ statements: docs.length }, 'statements not submitted: no SECRETS_ENCRYPTION_KEY');
    if (created > 0) this.wake();
  }

  start(): void {
    if (!this.options.secrets) return;
    this.loop.start();
  }

  wake(): void {
    this.loop.wake();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    await this.options.client.close();
  }

  /** Sends one tenant's claimed statements in one call and records each one's outcome (the loop's job). */
  async submitBatch(batch: Batch): Promise<void> {
    const { store, client, secrets } = this.options;
    const log = this.options.log.child({ tenantId: batch.tenantId, statements: batch.docs.length });
    const config = await store.configOf(batch.tenantId);
    if (!config) {
      // Turned off since they were planned.
      await Promise.all(
        batch.docs.map((doc) => store.finish(doc, undefined, { state: 'skipped', reason: 'disabled' })),
      );
      log.info('statements not submitted: submission turned off');
      return;
    }
    const at = new Date();
    const opened = secrets!.open(config.sealed, tdbTokenContext(batch.tenantId));
    if (!opened.ok) {
      log.error({ problem: opened.problem }, 'transparency database token cannot be opened (SECRETS_ENCRYPTION_KEY)');
      await this.retry(batch.docs, { at, durationMs: 0, batchSize: batch.docs.length, error: 'token_unreadable' }, log);
      return;
    }
    const target = { baseUrl: config.baseUrl, token: opened.plaintext };
    const result = await client.submit({ ...target, statements: batch.docs.map((doc) => doc.payload) });
    const attempt: TdbAttempt = {
      at,
      durationMs: result.durationMs,
      batchSize: batch.docs.length,
      ...(result.statusCode !== undefined ? { statusCode: result.statusCode } : {}),
    };
    if (result.kind === 'created') {
      this.options.onResult?.('submitted', batch.docs.length);
      await Promise.all(
        batch.docs.map((doc) => {
          const tdbUuid = result.uuids.get(doc.payload.puid);
          return store.finish(doc, attempt, { state: 'submitted', ...(tdbUuid ? { tdbUuid } : {}) });
        }),
      );
      log.info({ durationMs: result.durationMs }, 'statements submitted');
      return;
    }
    if (result.kind === 'failed') {
      await this.retry(batch.docs, { ...attempt, error: result.error }, log, result.retryAfterMs);
      return;
    }
    // Refused: the database stored none of the call's statements. Those refused for their puid alone are stored
    // already; those refused for anything else are failed (retrying sends the same statement); the others go again.
    const again: TdbSubmissionDoc[] = [];
    let rejected = 0;
    await Promise.all(
      batch.docs.map(async (doc, index) => {
        const fields = result.errors.get(index);
        if (!fields) {
          again.push(doc);
          return;
        }
        if (onlyPuidRefused(fields)) {
          const stored = await client.exists({ ...target, puid: doc.payload.puid });
          if (stored === true) {
            await store.finish(doc, { ...attempt, error: 'duplicate' }, { state: 'submitted', alreadyStored: true });
            return;
          }
        }
        rejected += 1;
        await store.finish(doc, { ...attempt, error: 'rejected' }, { state: 'failed', rejection: fields });
      }),
    );
    if (rejected > 0) {
      this.options.onResult?.('rejected', rejected);
      log.warn({ rejected }, 'statements refused by the transparency database');
    }
    // Sent again at once, without the refused ones; the attempt still counts towards the schedule.
    await Promise.all(
      again.map((doc) =>
        store.finish(doc, { ...attempt, error: 'batch_refused' }, this.nextState(doc, 0) ?? { state: 'failed' }),
      ),
    );
    if (again.length > 0) this.wake();
  }

  /** The next state after a failed attempt: pending after the schedule's delay, or null when it is exhausted. */
  private nextState(doc: TdbSubmissionDoc, delayFloorMs?: number): { state: 'pending'; dueAt: Date } | null {
    const delay = nextDelayMs({ attempts: doc.attemptCount + 1, scheduleS: this.options.retryScheduleS });
    if (delay === null) return null;
    const wait = delayFloorMs === undefined ? delay : delayFloorMs;
    return { state: 'pending', dueAt: new Date(Date.now() + wait) };
  }

  private async retry(
    docs: TdbSubmissionDoc[],
    attempt: TdbAttempt,
    log: Logger,
    retryAfterMs?: number,
  ): Promise<void> {
    this.options.onResult?.(attempt.error ?? 'error', docs.length);
    let exhausted = 0;
    await Promise.all(
      docs.map((doc) => {
        const delay = nextDelayMs({
          attempts: doc.attemptCount + 1,
          scheduleS: this.options.retryScheduleS,
          ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
        });
        if (delay === null) {
          exhausted += 1;
          return this.options.store.finish(doc, attempt, { state: 'failed' });
        }
        return this.options.store.finish(doc, attempt, { state: 'pending', dueAt: new Date(Date.now() + delay) });
      }),
    );
    log.info(
      { error: attempt.error, statusCode: attempt.statusCode, failed: exhausted },
      exhausted > 0 ? 'statements failed after their retries' : 'transparency database call failed, retrying',
    );
  }
}

/** Claimed statements grouped by tenant: one call each (at most 100, what one claim takes). */
export function batchesOf(docs: TdbSubmissionDoc[]): Batch[] {
  const byTenant = new Map<string, TdbSubmissionDoc[]>();
  for (const doc of docs) {
    const list = byTenant.get(doc.tenantId) ?? [];
    list.push(doc);
    byTenant.set(doc.tenantId, list);
  }
  return [...byTenant].map(([tenantId, list]) => ({ _id: list[0]!._id, tenantId, docs: list }));
}
