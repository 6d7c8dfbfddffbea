import { monotonicUlid, TenantVersions, type DomainEvent, type Policy } from '@vigil/proto';
import pino from 'pino';
import { TenantConfigCache } from '../store/tenant-config';
import { untilDone } from '@vigil/proto/platform';
import type { Db } from 'mongodb';
import type { Config } from '../config';
import type { ImageFetcher } from '../engine/images/fetch';
import { OffLoopPool, workerFile } from '../engine/off-loop';
import { HashBankMatcher } from './bank-matcher';
import { BankIndexes } from './bank-indexes';
import { HashBankStore } from './hash-bank-store';
import { HashBankUseCases } from './hash-bank-use-cases';
import type { ModerationDeps } from '../service/moderate';
import { applyHeldMatch } from './quarantine/apply-held-match';
import { FloodGuard } from './quarantine/flood-guard';
import { QuarantineStore } from './quarantine/quarantine-store';
import { QuarantineUseCases } from './quarantine/quarantine-use-cases';
import type { ModeratorModule, SharedParts } from '../shared-parts';
import { RetroPassStore } from './retro/retro-pass-store';
import { RetroQueue } from './retro/retro-queue';

export type HashBanksConfig = Pick<
  Config,
  | 'HASH_THREADS'
  | 'HASH_BUDGET_MS'
  | 'HASH_BANK_IDLE_MS'
  | 'IMAGE_MAX_PIXELS'
  | 'IMAGE_FETCH_TIMEOUT_MS'
  | 'ENGINE_QUEUE_PER_TENANT'
>;

export interface HashBanksDeps {
  /** The image fetcher the engine uses (absent when the engine is given by a test): lookups by URL need it. */
  fetcher?: ImageFetcher;
  policiesOf: (tenantId: string) => Promise<readonly Policy[]>;
  /**
   * Stores a HashQuarantined event (a stream without a projection) and hands it to the outbox; false when its version
   * was stored already. Without it, no hash is quarantined.
   */
  raise?: (event: DomainEvent) => Promise<boolean>;
}

export interface HashBanksModule extends ModeratorModule {
  /** What the engine matches images with. */
  matcher: HashBankMatcher;
  /** What the gRPC API calls. */
  useCases: HashBankUseCases;
  store: HashBankStore;
  /** Retroactive passes: their store, and the queue the use cases add to (run by retro/hash-retro.module.ts). */
  retro: { store: RetroPassStore; queue: RetroQueue };
  /** The flood quarantine's review, which applies released matches on the moderation path. */
  quarantine(moderation: Pick<ModerationDeps, 'store' | 'tenants' | 'writer' | 'users'>): QuarantineUseCases;
}

/**
 * The hash banks feature: its store, the tenants' in-memory indexes, the hash worker pool, matching and the API. Its
 * indexes are made when it starts (before the intake modules); its pool closes in the drain.
 */
export function hashBanksModule(
  config: HashBanksConfig,
  { db, log, metrics }: Pick<SharedParts, 'db' | 'log' | 'metrics'>,
  deps: HashBanksDeps,
): HashBanksModule {
  const store = new HashBankStore(db);
  const indexes = new BankIndexes(store, config.HASH_BANK_IDLE_MS);
  const quarantines = new QuarantineStore(db);
  const newId = monotonicUlid();
  const { raise } = deps;
  const flood = raise
    ? new FloodGuard({
        store: quarantines,
        raise,
        newId: () => newId(Date.now()),
        onQuarantine: () => metrics?.hashQuarantines.inc(),
        onHeld: (held) => metrics?.hashHeldMatches.inc({ outcome: held ? 'held' : 'not_kept' }),
      })
    : undefined;
  // Its threads start with the first image hashed: a deployment whose tenants keep no hash bank never runs them.
  const pool = new OffLoopPool({
    filename: workerFile('hash-worker'),
    threads: config.HASH_THREADS,
    lazy: true,
    tenantThreads: Math.max(1, config.HASH_THREADS - 1),
    maxQueuedPerTenant: config.ENGINE_QUEUE_PER_TENANT,
    onTask: (name, seconds, outcome) => metrics?.offLoop.observe({ task: name, outcome }, seconds),
  });
  const matcher = new HashBankMatcher({
    indexes,
    store,
    pool,
    budgetMs: config.HASH_BUDGET_MS,
    maxPixels: config.IMAGE_MAX_PIXELS,
    onMatch: (kind, outcome) => metrics?.hashBankMatches.inc({ kind, outcome }),
    flood,
  });
  const passes = new RetroPassStore(db);
  const queue = new RetroQueue(passes);
  const useCases = new HashBankUseCases({
    store,
    matcher,
    policiesOf: deps.policiesOf,
    fetcher: deps.fetcher,
    fetchTimeoutMs: config.IMAGE_FETCH_TIMEOUT_MS,
    retro: queue,
  });
  return {
    name: 'hash-banks',
    matcher,
    useCases,
    store,
    retro: { store: passes, queue },
    quarantine: (moderation) =>
      new QuarantineUseCases({
        store: quarantines,
        banks: store,
        apply: (input) => applyHeldMatch(moderation, input),
      }),
    start: () =>
      untilDone(log.child({ component: 'hash-banks' }), 'hash bank indexes', async () => {
        await store.ensureIndexes();
        await quarantines.ensureIndexes();
      }),
    drain: () => pool.close(),
  };
}

/**
 * The use cases as the operator CLI runs them: on the store, with the tenant's policies read from its settings, and
 * without a hash pool or a fetcher (hash lookups only). Its writes reach every moderator through the numbered changes,
 * and the retroactive passes it queues are run by them.
 */
export function operatorHashBanks(db: Db): HashBankUseCases {
  const store = new HashBankStore(db);
  const configs = new TenantConfigCache(db, 0, pino({ level: 'warn' }), new TenantVersions());
  return new HashBankUseCases({
    store,
    matcher: new HashBankMatcher({ indexes: new BankIndexes(store, 60_000), store, budgetMs: 0, maxPixels: 0 }),
    policiesOf: async (tenantId) => (await configs.get(tenantId)).settings.policies,
    fetchTimeoutMs: 0,
    // Hashes imported here are matched against stored records by the moderators, which look for queued passes.
    retro: new RetroQueue(new RetroPassStore(db)),
  });
}
