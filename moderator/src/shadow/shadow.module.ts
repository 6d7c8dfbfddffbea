import type { ModerationEngine } from '../engine';
import type { RulePrecision } from '../precision/rule-precision';
import type { ModeratorModule, SharedParts } from '../shared-parts';
import { SHADOW_BOUNDS, ShadowRunner } from './shadow-runner';

export interface ShadowModule extends ModeratorModule {
  runner: ShadowRunner;
}

/**
 * The tenants' shadow rules, judged after each live moderation off its path. Its judgements in flight use the engine
 * and write counters: they drain (within their budget) before the outbox flushes and the engine's pools close.
 */
export function shadowModule(
  { log, db, registry }: SharedParts,
  deps: { engine: ModerationEngine; precision: RulePrecision },
): ShadowModule {
  const runner = new ShadowRunner({
    engine: deps.engine,
    db,
    precision: deps.precision,
    log: log.child({ component: 'shadow-rules' }),
    registry,
    ...SHADOW_BOUNDS,
  });
  return { name: 'shadow-rules', runner, drain: () => runner.drain() };
}
