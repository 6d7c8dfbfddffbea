import { ulid } from '@vigil/proto';
import type { BankDoc, HashDoc } from '../hash-bank-store';
import type { RetroPassDoc, RetroPassStore, RetroTrigger } from './retro-pass-store';

/**
 * Queues a retroactive pass for hashes that start to act: added to a bank, or enabled or reconfirmed again. A negative
 * bank's hashes queue none: they flag nothing, and a pass never lifts a flag. Every moderator runs queued passes;
 * the one that queued it is woken at once.
 */
export class RetroQueue {
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly passes: Pick<RetroPassStore, 'create' | 'ofBank'>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Hears each pass queued here (the local runner). */
  onQueued(listener: () => void): void {
    this.listeners.add(listener);
  }

  async queue(bank: BankDoc, hashes: readonly HashDoc[], trigger: RetroTrigger): Promise<RetroPassDoc | undefined> {
    if (bank.negative || hashes.length === 0) return undefined;
    const change = hashes[0]?.change;
    const pass = await this.passes.create({
      _id: `hrp_${ulid()}`,
      tenantId: bank.tenantId,
      bankId: bank._id,
      trigger,
      hashIds: hashes.map((hash) => hash._id),
      ...(change && hashes.every((hash) => hash.change === change) ? { change } : {}),
      createdAt: this.now(),
    });
    for (const listener of this.listeners) listener();
    return pass;
  }

  /** The bank's newest pass, if any. */
  async last(bankId: string): Promise<RetroPassDoc | undefined> {
    return (await this.passes.ofBank(bankId))[0];
  }
}
