import { TenantVersions, type Policy } from '@vigil/proto';
import pino from 'pino';
import { TenantConfigCache } from '../store/tenant-config';
import { untilDone, type FeatureModule } from '@vigil/proto/platform';
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import type { Config } from '../config';
import type { ImageFetcher } from '../engine/images/fetch';
import { OffLoopPool, workerFile } from '../engine/off-loop';
import { HashBankMatcher } from './bank-matcher';
import { BankIndexes } from './bank-indexes';
import { HashBankStore } from './hash-bank-store';
import { HashBankUseCases } from './hash-bank-use-cases';

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
  config: HashBanksConfig;
  db: Db;
  log: Logger;
  /** The image fetcher the engine uses (absent when the engine is given by a test): lookups by URL need it. */
  fetcher?: ImageFetcher;
  policiesOf: (tenantId: string) => Promise<readonly Policy[]>;
  /** Bank matches found, by kind and outcome. */
  matches?: Counter<'kind' | 'outcome'>;
  onTask?: (name: string, seconds: number, outcome: 'ok' | 'budget' | 'error') => void;
}

export interface HashBanks {
  module: FeatureModule;
  /** What the engine matches images with. */
  matcher: HashBankMatcher;
  /** What the gRPC API calls. */
  useCases: HashBankUseCases;
}

/** The hash banks feature: its store, the tenants' in-memory indexes, the hash worker pool, matching and the API. */
export function createHashBanks(deps: HashBanksDeps): HashBanks {
  const { config, db, log } = deps;
  const store = new HashBankStore(db);
  const indexes = new BankIndexes(store, config.HASH_BANK_IDLE_MS);
  const pool = new OffLoopPool({
    filename: workerFile('hash-worker'),
    threads: config.HASH_THREADS,
    tenantThreads: Math.max(1, config.HASH_THREADS - 1),
    maxQueuedPerTenant: config.ENGINE_QUEUE_PER_TENANT,
    onTask: deps.onTask,
  });
  const matcher = new HashBankMatcher({
    indexes,
    store,
    pool,
    budgetMs: config.HASH_BUDGET_MS,
    maxPixels: config.IMAGE_MAX_PIXELS,
    onMatch: (kind, outcome) => deps.matches?.inc({ kind, outcome }),
  });
  const useCases = new HashBankUseCases({
    store,
    matcher,
    policiesOf: deps.policiesOf,
    fetcher: deps.fetcher,
    fetchTimeoutMs: config.IMAGE_FETCH_TIMEOUT_MS,
  });
  return {
    matcher,
    useCases,
    module: {
      name: 'hash-banks',
      start: () => untilDone(log, 'hash bank indexes', () => store.ensureIndexes()),
      drain: () => pool.close(),
    },
  };
}

/**
 * The use cases as the operator CLI runs them: on the store, with the tenant's policies read from its settings, and
 * without a hash pool or a fetcher (hash lookups only). Its writes reach every moderator through the numbered changes.
 */
export function operatorHashBanks(db: Db): HashBankUseCases {
  const store = new HashBankStore(db);
  const configs = new TenantConfigCache(db, 0, pino({ level: 'warn' }), new TenantVersions());
  return new HashBankUseCases({
    store,
    matcher: new HashBankMatcher({ indexes: new BankIndexes(store, 60_000), store, budgetMs: 0, maxPixels: 0 }),
    policiesOf: async (tenantId) => (await configs.get(tenantId)).settings.policies,
    fetchTimeoutMs: 0,
  });
}
