/**
 * The one map of the store's collections: each collection's name, the service that owns it (creates its indexes and
 * writes it), and every other service that reads it, with the reason. A service that writes a collection it does not
 * own is listed under `writers`: an exception kept until the write moves to the owner. `collections.test.ts` scans
 * each service's source and fails when a service touches a collection this map does not give it.
 *
 * To add a collection: add an entry here (name, owner, readers), then give the owner's store module its handle. A
 * second service that needs to read it either asks the owner (gRPC, an event) or is added to `readers` with its reason.
 */

export type ServiceName = 'gateway' | 'moderator' | 'notifier';

/** A service other than the owner that reads (or, as an exception, writes) a collection, and why. */
export interface CollectionUse {
  readonly service: ServiceName;
  readonly reason: string;
}

export interface CollectionSpec {
  readonly name: string;
  readonly owner: ServiceName;
  readonly readers: readonly CollectionUse[];
  /** Writes by a service other than the owner: exceptions, each to move to the owner. */
  readonly writers?: readonly CollectionUse[];
}

const gatewayReads = (reason: string): CollectionUse => ({ service: 'gateway', reason });
const moderatorReads = (reason: string): CollectionUse => ({ service: 'moderator', reason });
const notifierReads = (reason: string): CollectionUse => ({ service: 'notifier', reason });

export const COLLECTION_MAP = {
  // gateway
  tenants: {
    name: 'tenants',
    owner: 'gateway',
    readers: [
      moderatorReads('checks that a command names a tenant that exists (known-tenants.ts), by `_id`, cached'),
      notifierReads('puts the tenant name into user emails (email-store.ts)'),
    ],
  },
  apiKeys: { name: 'api_keys', owner: 'gateway', readers: [] },
  webhookEndpoints: {
    name: 'webhook_endpoints',
    owner: 'gateway',
    readers: [notifierReads('finds the enabled endpoints an event goes to, and their secrets (upstream-reads.ts)')],
  },
  rules: {
    name: 'rules',
    owner: 'gateway',
    readers: [moderatorReads("judges with the tenant's live rules (tenant-config.ts), cached per config version")],
  },
  settings: {
    name: 'settings',
    owner: 'gateway',
    readers: [
      moderatorReads("judges with the tenant's settings (tenant-config.ts), cached per config version"),
      notifierReads('reads whether and how to email users, and the appeal window of statements (tenant-settings.ts)'),
    ],
  },
  consoleMembers: { name: 'console_members', owner: 'gateway', readers: [] },
  consoleSessions: { name: 'console_sessions', owner: 'gateway', readers: [] },
  /** Failed console sign-ins per member and client address, and the lockouts they led to. */
  consoleSignInLocks: { name: 'console_sign_in_locks', owner: 'gateway', readers: [] },
  /** Tenants' payments keys, sealed (see payments.ts). */
  paymentKeys: {
    name: 'payment_keys',
    owner: 'gateway',
    readers: [notifierReads("unseals the tenant's payments key to pause and resume accounts (payment-store.ts)")],
  },
  /** Tenants' Transparency Database settings with the token sealed (see transparency-db.ts). */
  tdbConfigs: {
    name: 'tdb_configs',
    owner: 'gateway',
    readers: [notifierReads('unseals the token to submit statements of reasons (tdb-store.ts)')],
  },
  /** Claims on revisions of `rules` and `settings` documents (see the gateway's RevisedDocs), the last 20 of each. */
  configRevisions: { name: 'config_revisions', owner: 'gateway', readers: [] },
  /**
   * Each tenant's configuration version (`{_id: tenantId, version}`): one more with every change made through the API
   * to its endpoints, rules or settings. Carried with commands, calls and events so caches know when they are stale.
   */
  configVersions: { name: 'config_versions', owner: 'gateway', readers: [] },
  /**
   * Every rule set a tenant wrote, numbered per tenant (`{_id: "<tenantId>#<n>", tenantId, version: n, rules, kind,
   * author, note, createdAt}`), never changed once written. The live one is named by the `rules` document's `version`.
   */
  ruleVersions: { name: 'rule_versions', owner: 'gateway', readers: [] },
  /** The last rule set version number given out per tenant (a RevisedDocs document: numbers are never given twice). */
  ruleVersionCounters: { name: 'rule_version_counters', owner: 'gateway', readers: [] },
  /** Request counts per gateway instance, for the rate limit shared across replicas. */
  rateLimitCounts: { name: 'rate_limit_counts', owner: 'gateway', readers: [] },
  /** Backtest jobs (see backtests.ts): what to run, and a cancel request. */
  backtests: {
    name: 'backtests',
    owner: 'gateway',
    readers: [moderatorReads('reads the job it was told to run, and whether it was cancelled (backtest-store.ts)')],
  },
  /** Running backtests per tenant: `{_id: "<tenantId>#<slot>", jobId}`, one unique insert per slot taken. */
  backtestSlots: { name: 'backtest_slots', owner: 'gateway', readers: [] },
  /** Retroaction jobs (see retroactions.ts): what to apply, from which backtest, and a cancel request. */
  retroactions: {
    name: 'retroactions',
    owner: 'gateway',
    readers: [
      moderatorReads('reads the job it was told to apply, and whether it was cancelled (retroaction-store.ts)'),
    ],
  },
  /** The running retroaction of each tenant: `{_id: tenantId, jobId}`, taken by a unique insert. */
  retroactionSlots: { name: 'retroaction_slots', owner: 'gateway', readers: [] },

  // moderator
  events: { name: 'events', owner: 'moderator', readers: [] },
  records: {
    name: 'records',
    owner: 'moderator',
    readers: [notifierReads('fills record webhook bodies from the projection (upstream-reads.ts)')],
  },
  users: {
    name: 'users',
    owner: 'moderator',
    readers: [
      notifierReads('fills user webhook bodies from the projection (upstream-reads.ts)'),
      notifierReads("reads a user's email and name to send status emails (email-store.ts)"),
      notifierReads("reads a user's connected payments account to pause or resume it (payment-store.ts)"),
    ],
  },
  appeals: { name: 'appeals', owner: 'moderator', readers: [] },
  /** The reports projection (one document per report stream). */
  reports: { name: 'reports', owner: 'moderator', readers: [] },
  /**
   * One document per reporter and target with an open report (`_id`: a digest of both, `reportId`): its unique `_id`
   * is what makes a second open report by the same reporter on the same target answer with the first.
   */
  reportClaims: { name: 'report_claims', owner: 'moderator', readers: [] },
  /**
   * A reporter's email, apart from the events (`_id`: the report id): events are immutable and relayed to Kafka, so
   * personal data kept there could never be erased when its retention ends.
   */
  reportContacts: {
    name: 'report_contacts',
    owner: 'moderator',
    readers: [notifierReads("reads the reporter's email to tell them a report's outcome (email-store.ts)")],
  },
  /** How far the daily erasure of reporters' emails got (`{_id: 'report_contacts', day}`), shared by the replicas. */
  contactErasure: { name: 'contact_erasure', owner: 'moderator', readers: [] },
  /**
   * Each user's flagged, not deleted records (`{_id: userId, count}`): its own document, so that writing it never races
   * a write of the user's projection (an update on FerretDB v1 rewrites the whole document).
   */
  userFlaggedCounts: { name: 'user_flagged_counts', owner: 'moderator', readers: [] },
  /**
   * The outbox: a marker per moderator process and second in which it appended (`_id`: the slot the events carry),
   * until the relay has published the slot's events, and copies of events put back by a replay or left by earlier
   * releases (`_id`: the event id). It holds only what is still to publish, so reading and emptying it costs little; an
   * event document is never updated to say so.
   */
  outbox: { name: 'outbox', owner: 'moderator', readers: [] },
  /**
   * Each rule's flags and human reviews, per tenant, rule set version and UTC day (see rule-precision.ts), written as
   * events are committed.
   */
  rulePrecision: {
    name: 'rule_precision',
    owner: 'moderator',
    readers: [gatewayReads('answers the rule precision report from the counters (rule-precision-store.ts)')],
  },
  /** The last shadow judgement of each record (see rule-precision.ts), for comparing people's decisions with it. */
  shadowVerdicts: { name: 'shadow_verdicts', owner: 'moderator', readers: [] },
  /**
   * The transparency report's counters, per tenant, UTC day and writer (see transparency-report.ts), written as
   * events are committed.
   */
  transparencyCounts: {
    name: 'transparency_counts',
    owner: 'moderator',
    readers: [gatewayReads('answers the transparency report from the counters (transparency-count-store.ts)')],
  },
  /** Stored events the outbox relay could not publish (the broker refused them), with the reason. */
  outboxDeadLetters: { name: 'outbox_dead_letters', owner: 'moderator', readers: [] },
  /** Backtest runs (see backtests.ts): status, progress and result, by job id. */
  backtestRuns: {
    name: 'backtest_runs',
    owner: 'moderator',
    readers: [
      gatewayReads("shows a job's status, progress and result, and frees its slot once it ended (backtest-store.ts)"),
    ],
  },
  /** Retroaction runs (see retroactions.ts): status, progress and counts, by job id. */
  retroactionRuns: {
    name: 'retroaction_runs',
    owner: 'moderator',
    readers: [
      gatewayReads(
        "shows a job's status, progress and counts, and frees its slot once it ended (retroaction-store.ts)",
      ),
    ],
  },
  /** The record ids each retroaction run selected, in chunks, so that a resumed run goes on where it stopped. */
  retroactionItems: { name: 'retroaction_items', owner: 'moderator', readers: [] },

  // moderator: hash banks (docs/hash-banks.md)
  /** Hash banks (`_id`: `bnk_…`, `tenantId`): kind, match distance, policy, action, negative, enabled. */
  hashBanks: { name: 'hash_banks', owner: 'moderator', readers: [] },
  /**
   * The hashes of the banks (`_id`: `hsh_…`, a keyed digest of bank and hash; `tenantId`, `bankId`, value, metadata).
   * A withdrawn hash is deleted: no copy is kept anywhere in the store.
   */
  bankHashes: { name: 'bank_hashes', owner: 'moderator', readers: [] },
  /**
   * Each tenant's bank changes, numbered (`_id`: `<tenantId>#<n>`, naming the bank or hash id, never a hash value):
   * a replica's in-memory index reads the ones after its own by `_id` before it matches.
   */
  hashBankChanges: { name: 'hash_bank_changes', owner: 'moderator', readers: [] },
  /** The last change number written per tenant (`{_id: tenantId, n}`), where a replica loading an index starts. */
  hashBankHeads: { name: 'hash_bank_heads', owner: 'moderator', readers: [] },
  /**
   * The image hashes of each record that has some (`_id`: record id, `tenantId`, `bucket` `<tenantId>#<k>`, the hashes):
   * a compact copy that a retroactive pass reads bucket by bucket, rather than the records' whole documents.
   */
  recordImageHashes: { name: 'record_image_hashes', owner: 'moderator', readers: [] },
  /**
   * Retroactive passes (`_id`: `hrp_…`): a bank's new hashes (by id, never by value) matched against stored records,
   * with their state, progress and counts.
   */
  hashRetroPasses: { name: 'hash_retro_passes', owner: 'moderator', readers: [] },
  /** Claims on passes (`_id`: `<passId>#<attempt>`): a unique insert gives each attempt to one moderator. */
  hashRetroClaims: { name: 'hash_retro_claims', owner: 'moderator', readers: [] },
  /** Each match of a bank hash in a flood window, numbered (`_id`: `<hashId>#<window start, ms>#<n>`, `hashId`). */
  hashMatchCounts: { name: 'hash_match_counts', owner: 'moderator', readers: [] },
  /** Each hash's flood quarantine (`_id`: the hash id, `tenantId`): its state, number and counts. */
  hashQuarantines: { name: 'hash_quarantines', owner: 'moderator', readers: [] },
  /** The matches a quarantined hash holds (`_id`: `<hashId>#<recordId>#<position>`, `hashId`), bounded per hash. */
  heldHashMatches: { name: 'held_hash_matches', owner: 'moderator', readers: [] },
  /**
   * Scheduled feeds of hashes into a bank (`_id`: `fed_…`, `tenantId`, `bankId`): source, URL, interval, sealed
   * credentials, the upstream validators or checkpoint, the next run's time bucket (`due`) and the last run's result.
   */
  hashFeeds: { name: 'hash_feeds', owner: 'moderator', readers: [] },
  /** Claims on feed runs (unique `_id`: feed and due time): one replica runs each. */
  hashFeedClaims: { name: 'hash_feed_claims', owner: 'moderator', readers: [] },
  /** The hashes each feed brought (`_id`: `<feedId>:<hashId>`): a file feed withdraws those that left its file. */
  hashFeedItems: { name: 'hash_feed_items', owner: 'moderator', readers: [] },
  /** Feedback owed to an exchange (StopNCII `Blocked` after a match acted), one per feed and hash, until sent. */
  hashFeedFeedback: { name: 'hash_feed_feedback', owner: 'moderator', readers: [] },

  // notifier
  deliveries: {
    name: 'deliveries',
    owner: 'notifier',
    readers: [gatewayReads("lists an endpoint's deliveries and their attempts for the API (webhook-store.ts)")],
  },
  deliveryLeases: { name: 'delivery_leases', owner: 'notifier', readers: [] },
  endpointStates: {
    name: 'endpoint_states',
    owner: 'notifier',
    readers: [gatewayReads('shows whether the notifier disabled an endpoint, and why (webhook-store.ts)')],
  },
  /** Events the notifier could not turn into deliveries after its retries, with the reason. */
  eventDeadLetters: { name: 'event_dead_letters', owner: 'notifier', readers: [] },
  /** User emails: one per (status-change event, user), with its attempt log. */
  emailMessages: {
    name: 'email_messages',
    owner: 'notifier',
    readers: [gatewayReads("lists a user's emails and their attempts for the API (email-log-store.ts)")],
  },
  /** Claims on email attempts (unique `_id` per message and due time). */
  emailLeases: { name: 'email_leases', owner: 'notifier', readers: [] },
  /** Payment actions (pause, resume) on users' connected accounts, with their attempt log. */
  paymentActions: {
    name: 'payment_actions',
    owner: 'notifier',
    readers: [
      gatewayReads("lists a user's payment actions and their attempts for the API (payment-action-log-store.ts)"),
    ],
  },
  /** Claims on payment action attempts (unique `_id` per action and due time). */
  paymentLeases: { name: 'payment_leases', owner: 'notifier', readers: [] },
  /** Statements of reasons for the Transparency Database, with their attempt log. */
  tdbSubmissions: {
    name: 'tdb_submissions',
    owner: 'notifier',
    readers: [gatewayReads("shows a statement's submission and its attempts for the API (tdb-store.ts)")],
  },
  /** Calls to the Transparency Database to make again: each carries the statements a failed call held. */
  tdbRetries: { name: 'tdb_retries', owner: 'notifier', readers: [] },
  /** Claims on retried calls (unique `_id` per retry and due time). */
  tdbLeases: { name: 'tdb_leases', owner: 'notifier', readers: [] },
  /** Where each due queue's sweep of closed time buckets has reached (`_id`: the queue's collection). */
  dueCursors: { name: 'due_cursors', owner: 'notifier', readers: [] },
} as const satisfies Record<string, CollectionSpec>;

export type CollectionKey = keyof typeof COLLECTION_MAP;

/** Collection names by key (`COLLECTIONS.records === 'records'`); owners and readers are in COLLECTION_MAP. */
export const COLLECTIONS = Object.freeze(
  Object.fromEntries(Object.entries(COLLECTION_MAP).map(([key, spec]) => [key, spec.name])),
) as { readonly [K in CollectionKey]: (typeof COLLECTION_MAP)[K]['name'] };
