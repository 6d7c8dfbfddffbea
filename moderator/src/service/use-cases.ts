import type { DomainEvent, TenantVersions } from '@vigil/proto';
import type { ActivityGate, ModerationEngine } from '../engine';
import type { ShadowRunner } from '../shadow/shadow-runner';
import type { EventStore } from '../store/event-store';
import type { TenantConfigCache } from '../store/tenant-config';
import { JudgementCarry } from './judgement-carry';
import type { ModerationDeps } from './moderate';
import { NewRecordGuess } from './new-record-guess';
import type { OutboxSignal } from './outbox-signal';
import { StreamWriter } from './stream-writer';
import { UserReconciliation } from './user-reconciliation';

export interface UseCaseOptions {
  store: EventStore;
  engine: ModerationEngine;
  tenants: TenantConfigCache;
  /** Told of the events a commit appended, so the outbox relay publishes them without reading them back. */
  outbox: OutboxSignal;
  /** Runs the tenants' shadow rules after their moderations (optional). */
  shadow?: ShadowRunner;
  /** Called after each commit with its events (the after-commit reactions); never throws. */
  afterCommit?: (events: DomainEvent[]) => Promise<void>;
  /** Attempts of one decision under concurrent writers before giving up with ConflictError. */
  maxAttempts?: number;
  /** The tenants' configuration versions seen on calls and commands, stamped on every new event. */
  versions?: TenantVersions;
  /** Marks each moderation of a record without images while it runs: image inference yields to them. */
  textActivity?: ActivityGate;
  /** A moderation's first attempt may assume its record is new (see ModerationDeps.newRecords). */
  assumeNew?: boolean;
}

/** What every use case works with: one per process, built once, passed as the first argument of each use case. */
export type UseCases = ModerationDeps;

/**
 * Judgements kept for the retries of ingest commands whose commit failed (see JudgementCarry): at most this many, each
 * for at most ten minutes (the ingest consumer's retries back off to INGEST_RETRY_MAX_MS, 30 s by default).
 */
const CARRIED_JUDGEMENTS = 1000;
const CARRIED_JUDGEMENT_TTL_MS = 10 * 60_000;

/**
 * The moderator's use cases share one shape, load → decide → commit: load the streams, decide and stage their events
 * in the domain, commit them (one append, then the projections) with optimistic concurrency, re-reading and deciding
 * again on a conflict (StreamWriter); then the automatic user follow-ups (UserReconciliation). Each use case is a
 * function of its own file: `moderate.ts` and `rerun.ts` (moderations), `record-decisions.ts`, `user-decisions.ts`,
 * `reports.ts` (people's decisions), `replay-check.ts`. They throw AppErrors only.
 */
export function createUseCases(options: UseCaseOptions): UseCases {
  const writer = new StreamWriter(
    options.store,
    options.outbox,
    options.maxAttempts ?? 8,
    options.versions,
    options.afterCommit,
  );
  return {
    store: options.store,
    engine: options.engine,
    tenants: options.tenants,
    writer,
    users: new UserReconciliation(options.store, writer),
    carry: new JudgementCarry({ max: CARRIED_JUDGEMENTS, ttlMs: CARRIED_JUDGEMENT_TTL_MS }),
    shadow: options.shadow,
    textActivity: options.textActivity,
    newRecords: options.assumeNew ? new NewRecordGuess() : undefined,
  };
}
