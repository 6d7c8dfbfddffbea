import type { ContentData, RecordStatus, UserStatus, Via } from './events';

/**
 * Projection documents, rebuilt from the events by the moderator (their only writer). The gateway reads them through
 * gRPC; the notifier reads them directly to fill webhook payloads. Ids: see ids.ts.
 */
export interface RecordDoc {
  _id: string; // rec_…
  tenantId: string;
  clientId: string;
  clientUrl?: string;
  /** Absent for passthrough records. */
  name?: string;
  entity: string;
  /** Absent for passthrough records. */
  content?: ContentData;
  protected: boolean;
  metadata?: Record<string, unknown>;
  userId?: string;
  passthrough: boolean;
  status?: RecordStatus;
  statusUpdatedAt?: Date;
  statusUpdatedVia?: Via;
  /** Latest moderation. */
  moderationId?: string;
  reasons: string[];
  rules: string[];
  /** A human decided the current status: automation leaves it alone. */
  manual: boolean;
  testMode: boolean;
  deleted: boolean;
  /** Version of the record stream this projection reflects. */
  version: number;
  /** Monotonic insertion order for cursor pagination (time-ordered id of the first event). */
  sort: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface UserDoc {
  _id: string; // usr_…
  tenantId: string;
  clientId: string;
  clientUrl?: string;
  paymentsAccountId?: string;
  /** Absent when only seen in passthrough mode. */
  email?: string;
  name?: string;
  username?: string;
  protected: boolean;
  metadata?: Record<string, unknown>;
  status?: UserStatus;
  statusUpdatedAt?: Date;
  statusUpdatedVia?: Via;
  /** A human decided the current status: automation leaves it alone. */
  manual: boolean;
  version: number;
  sort: string;
  createdAt: Date;
  updatedAt: Date;
}

/** Collection names, per owner. */
export const COLLECTIONS = {
  // gateway
  tenants: 'tenants',
  apiKeys: 'api_keys',
  webhookEndpoints: 'webhook_endpoints',
  rules: 'rules',
  settings: 'settings',
  consoleMembers: 'console_members',
  consoleSessions: 'console_sessions',
  /** Failed console sign-ins per member and client address, and the lockouts they led to. */
  consoleSignInLocks: 'console_sign_in_locks',
  /** Tenants' payments keys, sealed (see payments.ts); read by the notifier. */
  paymentKeys: 'payment_keys',
  /** Tenants' Transparency Database settings with the token sealed (see transparency-db.ts); read by the notifier. */
  tdbConfigs: 'tdb_configs',
  /** Claims on revisions of `rules` and `settings` documents (see the gateway's RevisedDocs), the last 20 of each. */
  configRevisions: 'config_revisions',
  /**
   * Each tenant's configuration version (`{_id: tenantId, version}`): one more with every change made through the API
   * to its endpoints, rules or settings. Carried with commands, calls and events so caches know when they are stale.
   */
  configVersions: 'config_versions',
  /**
   * Every rule set a tenant wrote, numbered per tenant (`{_id: "<tenantId>#<n>", tenantId, version: n, rules, kind,
   * author, note, createdAt}`), never changed once written. The live one is named by the `rules` document's `version`.
   */
  ruleVersions: 'rule_versions',
  /** The last rule set version number given out per tenant (a RevisedDocs document: numbers are never given twice). */
  ruleVersionCounters: 'rule_version_counters',
  /** Request counts per gateway instance, for the rate limit shared across replicas. */
  rateLimitCounts: 'rate_limit_counts',
  /** Backtest jobs (see backtests.ts): what to run, and a cancel request. */
  backtests: 'backtests',
  /** Running backtests per tenant: `{_id: "<tenantId>#<slot>", jobId}`, one unique insert per slot taken. */
  backtestSlots: 'backtest_slots',
  /** Retroaction jobs (see retroactions.ts): what to apply, from which backtest, and a cancel request. */
  retroactions: 'retroactions',
  /** The running retroaction of each tenant: `{_id: tenantId, jobId}`, taken by a unique insert. */
  retroactionSlots: 'retroaction_slots',
  // moderator
  events: 'events',
  records: 'records',
  users: 'users',
  appeals: 'appeals',
  /** The reports projection (one document per report stream). */
  reports: 'reports',
  /**
   * One document per reporter and target with an open report (`_id`: a digest of both, `reportId`): its unique `_id`
   * is what makes a second open report by the same reporter on the same target answer with the first.
   */
  reportClaims: 'report_claims',
  /**
   * A reporter's email, apart from the events (`_id`: the report id): events are immutable and relayed to Kafka, so
   * personal data kept there could never be erased when its retention ends.
   */
  reportContacts: 'report_contacts',
  /** How far the daily erasure of reporters' emails got (`{_id: 'report_contacts', day}`), shared by the replicas. */
  contactErasure: 'contact_erasure',
  /**
   * Each user's flagged, not deleted records (`{_id: userId, count}`): its own document, so that writing it never races
   * a write of the user's projection (an update on FerretDB v1 rewrites the whole document).
   */
  userFlaggedCounts: 'user_flagged_counts',
  processedCommands: 'processed_commands',
  /**
   * The outbox: a copy of each stored event until the relay has published it (`_id`: the event id). It holds only
   * what is still to publish, so reading and emptying it costs little; an event document is never updated to say so.
   */
  outbox: 'outbox',
  /**
   * Each rule's flags and human reviews, per tenant, rule set version and UTC day (see rule-precision.ts): written by
   * the moderator as events are committed, read by the gateway.
   */
  rulePrecision: 'rule_precision',
  /** The last shadow judgement of each record (see rule-precision.ts), for comparing people's decisions with it. */
  shadowVerdicts: 'shadow_verdicts',
  /**
   * The transparency report's counters, per tenant, UTC day and writer (see transparency-report.ts): written by the
   * moderator as events are committed, read by the gateway.
   */
  transparencyCounts: 'transparency_counts',
  /** Stored events the outbox relay could not publish (the broker refused them), with the reason. */
  outboxDeadLetters: 'outbox_dead_letters',
  /** Backtest runs (see backtests.ts): status, progress and result, by job id. */
  backtestRuns: 'backtest_runs',
  /** Retroaction runs (see retroactions.ts): status, progress and counts, by job id. */
  retroactionRuns: 'retroaction_runs',
  /** The record ids each retroaction run selected, in chunks, so that a resumed run goes on where it stopped. */
  retroactionItems: 'retroaction_items',
  // notifier
  deliveries: 'deliveries',
  deliveryLeases: 'delivery_leases',
  endpointStates: 'endpoint_states',
  /** Events the notifier could not turn into deliveries after its retries, with the reason. */
  eventDeadLetters: 'event_dead_letters',
  /** User emails: one per (status-change event, user), with its attempt log; readable by the gateway. */
  emailMessages: 'email_messages',
  /** Claims on email attempts (unique `_id` per message and due time). */
  emailLeases: 'email_leases',
  /** Payment actions (pause, resume) on users' connected accounts, with their attempt log; readable by the gateway. */
  paymentActions: 'payment_actions',
  /** Claims on payment action attempts (unique `_id` per action and due time). */
  paymentLeases: 'payment_leases',
  /** Statements of reasons for the Transparency Database, with their attempt log; readable by the gateway. */
  tdbSubmissions: 'tdb_submissions',
  /** Calls to the Transparency Database to make again: each carries the statements a failed call held (notifier). */
  tdbRetries: 'tdb_retries',
  /** Claims on retried calls (unique `_id` per retry and due time). */
  tdbLeases: 'tdb_leases',
  /** Where each due queue's sweep of closed time buckets has reached (`_id`: the queue's collection). */
  dueCursors: 'due_cursors',
} as const;
