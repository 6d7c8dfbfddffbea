import { ulid } from '@vigil/proto';
import { retry } from '@vigil/proto/platform';
import { AppError } from '../../domain/errors';
import type { BankDoc, HashDoc } from '../hash-bank-store';
import type { RetroPassDoc, RetroPassStore, RetroTrigger } from './retro-pass-store';

/** Attempts at storing a pass, and the delays between them. */
const QUEUE_ATTEMPTS = 5;
const QUEUE_BACKOFF = { initialMs: 200, maxMs: 2000 };

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
    const fields = {
      _id: `hrp_${ulid()}`,
      tenantId: bank.tenantId,
      bankId: bank._id,
      trigger,
      hashIds: hashes.map((hash) => hash._id),
      ...(change && hashes.every((hash) => hash.change === change) ? { change } : {}),
      createdAt: this.now(),
    };
    // The hashes are written already: a store blip is retried here rather than failing the add (whose hashes the next
    // add would take over for their pass). The same id each attempt, so an insert that landed unanswered is not made
    // twice.
    const pass = await retry(() => this.passes.create(fields), {
      backoff: QUEUE_BACKOFF,
      maxAttempts: QUEUE_ATTEMPTS,
      retriable: (err) => err instanceof AppError && err.retriable,
    });
    for (const listener of this.listeners) listener();
    return pass;
  }

  /** The bank's newest pass, if any. */
  async last(bankId: string): Promise<RetroPassDoc | undefined> {
    return (await this.passes.ofBank(bankId))[0];
  }
}
