import type { HashMetadata } from '@vigil/proto';
import { NotFoundError } from '../../domain/errors';
import type { HashBankStore } from '../hash-bank-store';
import type { HeldOutcome } from './apply-held-match';
import type { HeldMatchDoc, QuarantineDoc, QuarantineStore } from './quarantine-store';

export interface QuarantineUseCasesDeps {
  store: Pick<
    QuarantineStore,
    'openOf' | 'quarantineOf' | 'heldOf' | 'heldCount' | 'dropHeld' | 'dropAllHeld' | 'decide' | 'applied'
  >;
  banks: Pick<HashBankStore, 'updateHash' | 'hashesById'>;
  /** Applies one held match to its record (apply-held-match.ts, on the moderation path). */
  apply: (input: {
    tenantId: string;
    recordId: string;
    match: HeldMatchDoc['match'];
    commandId: string;
  }) => Promise<HeldOutcome>;
  now?: () => Date;
}

/** A quarantine as the API shows it: the hash's metadata beside it, and how many matches it holds. */
export interface QuarantineView {
  quarantine: QuarantineDoc;
  metadata: HashMetadata;
  /** Matches it holds. */
  held: number;
}

/**
 * A person's review of the flood quarantine (docs/hash-banks.md, "Flood quarantine"): the list of quarantined hashes,
 * a release (the hash acts again and its held matches are applied, never over a person's decision on a record) or a
 * dismissal (the held matches are dropped and the hash is disabled in its bank, where a person can enable it again).
 */
export class QuarantineUseCases {
  private readonly now: () => Date;

  constructor(private readonly deps: QuarantineUseCasesDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  async list(tenantId: string): Promise<QuarantineView[]> {
    const open = await this.deps.store.openOf(tenantId);
    const hashes = await this.deps.banks.hashesById(open.map((doc) => doc._id));
    const metadataOf = new Map(hashes.map((hash) => [hash._id, hash.metadata]));
    return Promise.all(
      open.map(async (quarantine) => ({
        quarantine,
        metadata: metadataOf.get(quarantine._id) ?? {},
        held: await this.deps.store.heldCount(quarantine._id),
      })),
    );
  }

  /**
   * Releases the hash: from now on its matches act, and each held match is applied to its record. A release cut short
   * (the store failed part way) is finished by releasing again: each applied match is dropped, and a match applied
   * before is recognised by its command id.
   */
  async release(tenantId: string, hashId: string): Promise<{ applied: number; skipped: number }> {
    const quarantine = await this.open(tenantId, hashId);
    if (quarantine.state === 'quarantined') {
      await this.deps.store.decide(hashId, { state: 'released', decidedAt: this.now(), applying: true });
    }
    let applied = 0;
    let skipped = 0;
    for (const held of await this.deps.store.heldOf(hashId)) {
      const outcome = await this.deps.apply({
        tenantId,
        recordId: held.recordId,
        match: held.match,
        commandId: `release-${held._id}-${held.n}`,
      });
      if (outcome === 'applied') applied += 1;
      else skipped += 1;
      await this.deps.store.dropHeld(held._id);
    }
    await this.deps.store.applied(hashId);
    return { applied, skipped };
  }

  /** Dismisses the quarantine: the held matches are dropped and the hash is disabled in its bank. */
  async dismiss(tenantId: string, hashId: string): Promise<{ dropped: number }> {
    const quarantine = await this.open(tenantId, hashId);
    try {
      await this.deps.banks.updateHash(tenantId, quarantine.bankId, hashId, { enabled: false });
    } catch (err) {
      // A hash withdrawn since matches nothing any more: there is nothing to disable.
      if (!(err instanceof NotFoundError)) throw err;
    }
    await this.deps.store.decide(hashId, { state: 'dismissed', decidedAt: this.now(), applying: false });
    return { dropped: await this.deps.store.dropAllHeld(hashId) };
  }

  /** The hash's quarantine while a person has to act on it (quarantined, or a release still applying). */
  private async open(tenantId: string, hashId: string): Promise<QuarantineDoc> {
    const quarantine = await this.deps.store.quarantineOf(hashId);
    if (
      !quarantine ||
      quarantine.tenantId !== tenantId ||
      (quarantine.state !== 'quarantined' && quarantine.applying !== true)
    ) {
      throw new NotFoundError('quarantined hash not found', { hashId });
    }
    return quarantine;
  }
}
