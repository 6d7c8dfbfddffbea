import { type DomainEvent, type HashMatchRecord } from '@vigil/proto';
import { hashStreamOf, type FloodLimit } from '../bank-rules';
import type { QuarantineDoc, QuarantineStore } from './quarantine-store';

/** What the guard needs of the store (QuarantineStore; an in-memory fake in its spec). */
export type FloodStore = Pick<QuarantineStore, 'countMatch' | 'quarantineOf' | 'startQuarantine' | 'hold'>;

export interface FloodGuardDeps {
  store: FloodStore;
  /**
   * Appends a HashQuarantined event (stream `hash-<tenantId>-<hashId>`, version: the quarantine's number) and hands it
   * to the outbox; answers false when that version was stored already (another replica raised it).
   */
  raise: (event: DomainEvent) => Promise<boolean>;
  newId: () => string;
  now?: () => Date;
  /** Each quarantine raised and each match held (metrics). */
  onQuarantine?: () => void;
  onHeld?: (held: boolean) => void;
}

/** The start of the flood window that `at` falls in: windows are aligned to the epoch, `windowSeconds` long. */
export function windowStart(at: Date, windowSeconds: number): Date {
  const ms = windowSeconds * 1000;
  return new Date(Math.floor(at.getTime() / ms) * ms);
}

/**
 * Whether a hash at `count` matches in its window passes the bank's threshold: the threshold is the most matches a
 * window allows, so the match after it quarantines the hash.
 */
export const passes = (count: number, flood: FloodLimit): boolean => count > flood.threshold;

/**
 * Flood quarantine (HMA's #1994: a hash that suddenly matches far above its baseline, a meme, is usually a false
 * positive). Each match of a record in a bank with a flood limit is counted per hash and window; the match that passes
 * the threshold quarantines the hash, and from then on every match of it is held (kept with its record, not acted on)
 * until a person releases or dismisses it (quarantine-use-cases.ts). A hash a person released or re-enabled acts for
 * the rest of the window it was decided in. A lookup (no record) counts nothing and holds nothing, but shows a
 * quarantined hash's matches as quarantined.
 */
export class FloodGuard {
  private readonly now: () => Date;

  constructor(private readonly deps: FloodGuardDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /**
   * The matches as they act: a cancelled one as it is; one of a quarantined hash (or of the match that quarantines it)
   * marked `quarantined` and held for the record.
   */
  async screen(
    tenantId: string,
    matches: readonly HashMatchRecord[],
    floodOf: (bankId: string) => FloodLimit | undefined,
    of?: { recordId: string },
  ): Promise<HashMatchRecord[]> {
    const out: HashMatchRecord[] = [];
    for (const match of matches) {
      out.push(
        match.cancelledBy === undefined ? await this.screenOne(tenantId, match, floodOf(match.bankId), of) : match,
      );
    }
    return out;
  }

  private async screenOne(
    tenantId: string,
    match: HashMatchRecord,
    flood: FloodLimit | undefined,
    of: { recordId: string } | undefined,
  ): Promise<HashMatchRecord> {
    const { store } = this.deps;
    const current = await store.quarantineOf(match.hashId);
    if (current?.tenantId === tenantId && current.state === 'quarantined') {
      if (of) await this.hold(current, match, of.recordId);
      return { ...match, quarantined: true };
    }
    if (!flood || !of) return match;
    const now = this.now();
    const window = windowStart(now, flood.windowSeconds);
    // A person released (or re-enabled) the hash in this window: it acts, uncounted, until the next one.
    if (current?.decidedAt && current.decidedAt.getTime() >= window.getTime()) return match;
    const count = await store.countMatch(tenantId, match.hashId, window);
    if (!passes(count, flood)) return match;
    const quarantine = await this.quarantine(tenantId, match, flood, count, current, of.recordId);
    await this.hold(quarantine, match, of.recordId);
    return { ...match, quarantined: true };
  }

  /**
   * Quarantine number n of the hash: its HashQuarantined event is appended first (the unique stream version makes one
   * replica raise it, and a replica that died before writing the state leaves it to the next match), then the state
   * (the first writer's stays).
   */
  private async quarantine(
    tenantId: string,
    match: HashMatchRecord,
    flood: FloodLimit,
    count: number,
    current: QuarantineDoc | null,
    correlationId: string,
  ): Promise<QuarantineDoc> {
    const now = this.now();
    const n = (current?.n ?? 0) + 1;
    const event: DomainEvent = {
      id: this.deps.newId(),
      type: 'HashQuarantined',
      tenantId,
      stream: hashStreamOf(tenantId, match.hashId),
      version: n,
      occurredAt: now.toISOString(),
      correlationId,
      data: {
        hashId: match.hashId,
        bankId: match.bankId,
        bankName: match.bankName,
        kind: match.kind,
        number: n,
        threshold: flood.threshold,
        windowSeconds: flood.windowSeconds,
        count,
      },
    };
    const raised = await this.deps.raise(event);
    if (raised) this.deps.onQuarantine?.();
    const doc: QuarantineDoc = {
      _id: match.hashId,
      tenantId,
      bankId: match.bankId,
      bankName: match.bankName,
      kind: match.kind,
      n,
      state: 'quarantined',
      threshold: flood.threshold,
      windowSeconds: flood.windowSeconds,
      count,
      overflow: 0,
      since: now,
    };
    // Whoever wrote it first (this replica, or another that raised it or passed the threshold at once) keeps it.
    await this.deps.store.startQuarantine(doc, current?.n);
    const written = await this.deps.store.quarantineOf(match.hashId);
    return written?.n === n && written.state === 'quarantined' ? written : doc;
  }

  private async hold(quarantine: QuarantineDoc, match: HashMatchRecord, recordId: string): Promise<void> {
    const held = await this.deps.store.hold(quarantine, recordId, match, this.now());
    this.deps.onHeld?.(held);
  }
}
