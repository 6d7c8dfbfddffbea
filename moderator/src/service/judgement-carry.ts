import type { RuleSet } from '@vigil/proto/rules';
import { LRUCache } from 'lru-cache';
import type { EngineResult } from '../engine';

/** What the engine decided for one command, and what it saw: judged again only when that changed. */
export interface Judgement {
  /** The merged metadata and the prior human decision the engine saw, as one key. */
  key: string;
  /** The tenant's rule set it was judged under (the tenant cache keeps one object per stored revision). */
  rules: RuleSet;
  result: EngineResult;
}

/**
 * The engine's judgement of an ingest command whose moderation failed after it was judged (the store did not take the
 * commit): the command's retry uses it instead of judging again, so a record's images are fetched and judged, and its
 * prompt rules asked, once per moderation rather than once per retry of an ingest command. In memory, per process,
 * bounded in entries and time: a retry that comes later, or on another replica, judges again. Only failed commands are
 * kept.
 */
export class JudgementCarry {
  private readonly entries: LRUCache<string, Judgement>;

  constructor(options: { max: number; ttlMs: number }) {
    this.entries = new LRUCache({ max: options.max, ttl: options.ttlMs });
  }

  /** Kept for the command's retry. */
  keep(commandId: string, judgement: Judgement): void {
    this.entries.set(commandId, judgement);
  }

  /** The judgement a failed attempt of the command left, taken out: a later failure keeps it again. */
  take(commandId: string): Judgement | undefined {
    const judgement = this.entries.get(commandId);
    if (judgement) this.entries.delete(commandId);
    return judgement;
  }
}
