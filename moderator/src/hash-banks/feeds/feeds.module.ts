import { addressPolicy, SecretBox } from '@vigil/proto';
import type { Db } from 'mongodb';
import { untilDone } from '@vigil/proto/platform';
import type { Config } from '../../config';
import type { ReactingModule, SharedParts } from '../../shared-parts';
import { HashBankStore } from '../hash-bank-store';
import { FeedHttp } from './feed-http';
import { FeedRunner } from './feed-runner';
import { FeedStore } from './feed-store';
import { FeedUseCases } from './feed-use-cases';
import { queueFeedback } from './feedback-reaction';

export type HashFeedsConfig = Pick<
  Config,
  | 'HASH_FEED_ALLOWED_CIDRS'
  | 'HASH_FEED_POLL_MS'
  | 'HASH_FEED_TIMEOUT_MS'
  | 'HASH_FEED_MAX_BYTES'
  | 'HASH_FEED_RETRY_MS'
  | 'SECRETS_ENCRYPTION_KEY'
>;

export interface HashFeedsModule extends ReactingModule {
  /** What the gRPC API calls. */
  useCases: FeedUseCases;
  runner: FeedRunner;
}

/** Pages of an exchange one run reads at most (800 StopNCII records or 1,000 NCMEC entries a page). */
const MAX_PAGES = 10;
/** Attempts at one feedback (with HASH_FEED_RETRY_MS doubling, about a day of tries at the default). */
const FEEDBACK_ATTEMPTS = 12;

/**
 * Hash feeds and exchanges (docs/hash-banks.md#feeds-and-exchanges): the feeds' store, the runner that every replica
 * polls with (each run claimed by one), the API's use cases, and the reaction that owes StopNCII its feedback after a
 * match flagged a record. The runner starts with the module and stops with the intake.
 */
export function hashFeedsModule(
  config: HashFeedsConfig,
  { db, log, metrics }: Pick<SharedParts, 'db' | 'log' | 'metrics'>,
): HashFeedsModule {
  const feeds = new FeedStore(db);
  const banks = new HashBankStore(db);
  const http = new FeedHttp({
    policy: addressPolicy(config.HASH_FEED_ALLOWED_CIDRS),
    maxBytes: config.HASH_FEED_MAX_BYTES,
    timeoutMs: config.HASH_FEED_TIMEOUT_MS,
  });
  const box = config.SECRETS_ENCRYPTION_KEY?.length ? new SecretBox(config.SECRETS_ENCRYPTION_KEY) : undefined;
  const componentLog = log.child({ component: 'hash-feeds' });
  const runner = new FeedRunner({
    feeds,
    banks,
    http,
    box,
    log: componentLog,
    pollMs: config.HASH_FEED_POLL_MS,
    retry: { initialMs: config.HASH_FEED_RETRY_MS, maxMs: 24 * 3600_000 },
    maxPages: MAX_PAGES,
    feedbackAttempts: FEEDBACK_ATTEMPTS,
    // Every call of a run at its deadline, and a margin for the store's writes (10 pages of 30 s: 6 minutes).
    leaseMs: config.HASH_FEED_TIMEOUT_MS * (MAX_PAGES + 2),
    onRun: (source, state, failure) => metrics?.hashFeedRuns.inc({ source, state, failure: failure ?? '' }),
    onDeadClaims: (job, count) => metrics?.hashFeedDeadClaims.inc({ job }, count),
  });
  const useCases = new FeedUseCases({ feeds, banks, http, box, wake: () => runner.wake() });
  return {
    name: 'hash-feeds',
    useCases,
    runner,
    reactions: [
      {
        name: 'hash-feed-feedback',
        applicableEvents: ['RecordModerated'],
        react: (events) => queueFeedback(feeds, componentLog, events, () => runner.wake()),
      },
    ],
    async start() {
      await untilDone(componentLog, 'hash feed indexes', () => feeds.ensureIndexes());
      runner.start();
    },
    stopIntake: () => runner.stop(),
  };
}

/**
 * The use cases as the operator CLI runs them, on the store: a feed it creates or makes due is run by the moderators'
 * next poll (the CLI runs nothing itself).
 */
export function operatorHashFeeds(
  db: Db,
  config: Pick<HashFeedsConfig, 'SECRETS_ENCRYPTION_KEY' | 'HASH_FEED_ALLOWED_CIDRS'>,
): FeedUseCases {
  return new FeedUseCases({
    feeds: new FeedStore(db),
    banks: new HashBankStore(db),
    http: new FeedHttp({ policy: addressPolicy(config.HASH_FEED_ALLOWED_CIDRS), maxBytes: 0, timeoutMs: 0 }),
    box: config.SECRETS_ENCRYPTION_KEY?.length ? new SecretBox(config.SECRETS_ENCRYPTION_KEY) : undefined,
    wake: () => undefined,
  });
}
