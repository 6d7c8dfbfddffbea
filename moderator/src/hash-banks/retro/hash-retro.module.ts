import { untilDone } from '@vigil/proto/platform';
import { Counter } from 'prom-client';
import type { Config } from '../../config';
import type { ActivityGate } from '../../engine';
import type { ModerationDeps } from '../../service/moderate';
import type { ReactingModule, SharedParts } from '../../shared-parts';
import type { HashBanksModule } from '../hash-banks.module';
import { recordHashReaction } from './record-hash-reaction';
import { RecordHashStore } from './record-hash-store';
import { retroMatch } from './retro-match';
import { RetroRunner } from './retro-runner';

/** How long after the last live moderation a pass keeps its background rates (as backtests do). */
const LIVE_QUIET_MS = 1000;
/** Records read at once, and between two progress writes. */
const CHUNK = 500;
/** Attempts of one pass (each a restart, a lost store, a takeover) before it fails. */
const MAX_ATTEMPTS = 5;

export type HashRetroConfig = Pick<
  Config,
  | 'HASH_RETRO_RATE_PER_S'
  | 'HASH_RETRO_BUSY_RATE_PER_S'
  | 'HASH_RETRO_LEASE_MS'
  | 'HASH_RETRO_POLL_MS'
  | 'RETROACTION_RATE_PER_S'
  | 'BACKTEST_BUSY_RATE_PER_S'
>;

/**
 * Retroactive matching (docs/hash-banks.md): the record hashes kept after each commit (a reaction), and the runner of
 * the passes that hashes starting to act queue (hash-bank-use-cases.ts). Its runner starts with the intake and stops
 * with it, leaving a pass in progress to the next runner.
 */
export async function hashRetroModule(
  config: HashRetroConfig,
  { db, log, registry }: Pick<SharedParts, 'db' | 'log' | 'registry'>,
  deps: {
    banks: Pick<HashBanksModule, 'matcher' | 'store' | 'retro'>;
    /** The moderation path a match is written through (built after the reactions it takes). */
    moderation: () => Pick<ModerationDeps, 'store' | 'tenants' | 'writer' | 'users'>;
    /** Live moderations in flight: a pass slows to its background rates beside them. */
    liveActivity: ActivityGate;
  },
): Promise<ReactingModule> {
  const moduleLog = log.child({ component: 'hash-retro' });
  const records = new RecordHashStore(db);
  await untilDone(moduleLog, 'record image hash indexes', () => records.ensureIndexes());
  await untilDone(moduleLog, 'hash retro pass indexes', () => deps.banks.retro.store.ensureIndexes());
  const counter = (name: string, help: string) =>
    registry && new Counter({ name, help, labelNames: ['outcome'], registers: [registry] });
  const passCounter = counter(
    'moderator_hash_retro_passes_total',
    'Retroactive hash pass attempts by outcome (succeeded, failed, interrupted: left for the next runner, lost: taken over, unrecorded: claimed but never recorded, taken over after the lease)',
  );
  const recordCounter = counter(
    'moderator_hash_retro_records_total',
    'Records a retroactive hash pass matched, by outcome (flagged, heldByHumans, unchanged, gone, error: skipped)',
  );
  const failedWrites = counter(
    'moderator_hash_retro_projection_writes_total',
    'Writes of record image hashes after a commit that failed (outcome: failed)',
  );
  const runner = new RetroRunner({
    passes: deps.banks.retro.store,
    records,
    hashes: deps.banks.store,
    applied: (tenantId, change) => deps.banks.matcher.applied(tenantId, change),
    act: (input) => retroMatch(deps.moderation(), deps.banks.matcher, input),
    log: moduleLog,
    scanRatePerSecond: config.HASH_RETRO_RATE_PER_S,
    actRatePerSecond: config.RETROACTION_RATE_PER_S,
    live: {
      gate: deps.liveActivity,
      quietMs: LIVE_QUIET_MS,
      scanRatePerSecond: config.HASH_RETRO_BUSY_RATE_PER_S,
      actRatePerSecond: config.BACKTEST_BUSY_RATE_PER_S,
    },
    leaseMs: config.HASH_RETRO_LEASE_MS,
    pollMs: config.HASH_RETRO_POLL_MS,
    maxAttempts: MAX_ATTEMPTS,
    chunk: CHUNK,
    onPass: (outcome) => passCounter?.inc({ outcome }),
    onRecord: (outcome) => recordCounter?.inc({ outcome }),
  });
  deps.banks.retro.queue.onQueued(() => runner.wake());
  return {
    name: 'hash-retro',
    reactions: [recordHashReaction(records, moduleLog, () => failedWrites?.inc({ outcome: 'failed' }))],
    start: () => runner.start(),
    stopIntake: () => runner.stop(),
  };
}
