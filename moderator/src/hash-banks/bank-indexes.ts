import { BankIndex, type BankInfo } from './bank-index';
import { OPEN_CHANGE_MS, type BankDoc, type ChangeDoc, type HashBankStore, type HashDoc } from './hash-bank-store';

/** Changes applied again after a load: writers that claimed lower numbers may finish after the head moved past. */
const REPLAY_ON_LOAD = 16;
/** Changes applied by one refresh at most; a replica further behind loads the tenant's banks again. */
const MAX_CATCH_UP = 1000;

interface Entry {
  index: BankIndex;
  /** The last change applied. */
  n: number;
  usedAt: number;
  /** The refresh in progress: a tenant's refreshes run one at a time. */
  turn: Promise<unknown>;
}

/**
 * Every tenant's banks as an in-memory BankIndex, kept current by the numbered changes (hash-bank-store.ts): before
 * each use, the changes after the index's own are read by `_id` and applied in place (a hash added or withdrawn costs
 * the same whatever the bank's size). With no change since, a use costs one read by `_id`. So a change answered by
 * any replica applies to every match that starts after the answer. An index unused for `idleMs` is dropped.
 */
export class BankIndexes {
  private readonly entries = new Map<string, Entry>();
  private sweptAt = 0;

  constructor(
    private readonly store: HashBankStore,
    private readonly idleMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The tenant's index, with every finished change applied. */
  async current(tenantId: string): Promise<BankIndex> {
    this.sweep();
    let entry = this.entries.get(tenantId);
    if (!entry) {
      entry = { index: new BankIndex(), n: -1, usedAt: this.now(), turn: Promise.resolve() };
      this.entries.set(tenantId, entry);
    }
    entry.usedAt = this.now();
    const held = entry;
    const refreshed = held.turn.then(() => this.refresh(tenantId, held));
    held.turn = refreshed.catch(() => undefined);
    await refreshed;
    return held.index;
  }

  /** Whether the tenant's index, brought up to date, has applied change `n`: a match then sees what it wrote. */
  async applied(tenantId: string, n: number): Promise<boolean> {
    await this.current(tenantId);
    return (this.entries.get(tenantId)?.n ?? -1) >= n;
  }

  /** Tenants whose index is held in memory. */
  get size(): number {
    return this.entries.size;
  }

  private async refresh(tenantId: string, entry: Entry): Promise<void> {
    if (entry.n < 0) await this.load(tenantId, entry);
    for (let steps = 0; ; steps++) {
      if (steps >= MAX_CATCH_UP) {
        entry.n = -1;
        entry.index = new BankIndex();
        return this.refresh(tenantId, entry);
      }
      const change = await this.store.changeAt(tenantId, entry.n + 1);
      if (!change) return;
      if (!change.done && this.now() - change.at.getTime() < OPEN_CHANGE_MS) return;
      await this.apply(entry.index, change);
      entry.n = change.n;
    }
  }

  private async load(tenantId: string, entry: Entry): Promise<void> {
    const head = await this.store.head(tenantId);
    const { banks, hashes } = await this.store.snapshot(tenantId);
    const index = new BankIndex();
    for (const bank of banks) index.putBank(bankInfo(bank));
    for (const hash of hashes) putHash(index, hash);
    for (let n = Math.max(1, head - REPLAY_ON_LOAD + 1); n <= head; n++) {
      const change = await this.store.changeAt(tenantId, n);
      if (change) await this.apply(index, change);
    }
    entry.index = index;
    entry.n = head;
  }

  private async apply(index: BankIndex, change: ChangeDoc): Promise<void> {
    if (change.bank) {
      const bank = await this.store.bankById(change.bankId);
      if (bank) index.putBank(bankInfo(bank));
      else index.removeBank(change.bankId);
    }
    if (change.hashes) {
      for (const hash of await this.store.hashesOfChange(change)) putHash(index, hash);
    }
    for (const id of change.removed ?? []) index.removeHash(id);
  }

  /** Drops idle indexes, looking at most once a minute (a look visits every tenant held). */
  private sweep(): void {
    const now = this.now();
    if (now - this.sweptAt < Math.min(60_000, this.idleMs)) return;
    this.sweptAt = now;
    for (const [tenantId, entry] of this.entries) {
      if (now - entry.usedAt > this.idleMs) this.entries.delete(tenantId);
    }
  }
}

export function bankInfo(bank: BankDoc): BankInfo {
  return {
    id: bank._id,
    name: bank.name,
    kind: bank.kind,
    distance: bank.kind === 'pdq' ? bank.distance : 0,
    negative: bank.negative,
    enabled: bank.enabled,
    action: bank.action,
    ...(bank.policyId ? { policyId: bank.policyId } : {}),
    ...(bank.flood ? { flood: bank.flood } : {}),
  };
}

/** A hash acts while it is enabled and not deconfirmed; otherwise it leaves the index. */
export function putHash(index: BankIndex, hash: HashDoc): void {
  if (hash.enabled && hash.review !== 'deconfirmed') {
    index.putHash({ id: hash._id, bankId: hash.bankId, value: hash.value });
  } else {
    index.removeHash(hash._id);
  }
}
