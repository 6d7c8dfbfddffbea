import type { HashMatchRecord, ImageHashRecord } from '@vigil/proto';
import type { ImageHashes } from '../engine/images/image-hashes';
import type { OffLoopPool } from '../engine/off-loop';
import type { BankMatcher } from '../engine/types';
import type { BankHit, QueryHashes } from './bank-index';
import type { BankIndexes } from './bank-indexes';
import { changeNumber, type HashBankStore, type HashDoc } from './hash-bank-store';
import type { FloodGuard } from './quarantine/flood-guard';

export interface HashBankMatcherOptions {
  indexes: BankIndexes;
  store: HashBankStore;
  /** The hash worker pool (engine/hash-worker.ts); without it (the operator CLI), images are not hashed. */
  pool?: OffLoopPool;
  /** Running time of one image's decoding and hashing, milliseconds. */
  budgetMs: number;
  /** Decoded pixels of one image at most. */
  maxPixels: number;
  /** Each match found (a metric): the bank's kind and whether a negative bank cancelled it. */
  onMatch?: (kind: string, outcome: 'matched' | 'cancelled') => void;
  /** Flood quarantine: counts a record's matches and holds those of quarantined hashes (quarantine/flood-guard.ts). */
  flood?: FloodGuard;
}

/**
 * Matching for the engine and for lookups: images hashed in the hash worker pool, hashes matched in the tenant's
 * in-memory index, and each match completed from the store by the hash's `_id` (its metadata; a hash withdrawn since
 * the index was read is no match). Matches are rare (IFTAS saw 4.29 in 100,000 images), so that read costs little.
 */
export class HashBankMatcher implements BankMatcher {
  constructor(private readonly options: HashBankMatcherOptions) {}

  async active(tenantId: string): Promise<boolean> {
    return (await this.options.indexes.current(tenantId)).active;
  }

  /** Whether this moderator's index of the tenant has applied the change (its id): a match sees its hashes. */
  applied(tenantId: string, change: string): Promise<boolean> {
    return this.options.indexes.applied(tenantId, changeNumber(change));
  }

  async hash(tenantId: string, bytes: Uint8Array, signal?: AbortSignal): Promise<ImageHashes | undefined> {
    const { pool, budgetMs, maxPixels } = this.options;
    if (!pool) return undefined;
    const outcome = await pool.run<ImageHashes>(tenantId, 'hash', { bytes, maxPixels }, { budgetMs, signal });
    return outcome.ok ? outcome.value : undefined;
  }

  async match(
    tenantId: string,
    images: readonly ImageHashRecord[],
    of?: { recordId: string },
  ): Promise<HashMatchRecord[]> {
    const index = await this.options.indexes.current(tenantId);
    const found: { position: number; hit: BankHit; by?: BankHit }[] = [];
    for (const image of images) {
      const query: QueryHashes = { md5: image.md5, sha256: image.sha256, ...(image.pdq ? { pdq: image.pdq } : {}) };
      const outcome = index.match(query);
      for (const hit of outcome.matches) found.push({ position: image.position, hit });
      for (const { hit, by } of outcome.cancelled) found.push({ position: image.position, hit, by });
    }
    if (found.length === 0) return [];
    const docs = await this.options.store.hashesById([...new Set(found.map(({ hit }) => hit.hashId))]);
    const byId = new Map<string, HashDoc>(docs.map((doc) => [doc._id, doc]));
    const matches: HashMatchRecord[] = [];
    for (const { position, hit, by } of found) {
      const doc = byId.get(hit.hashId);
      if (!doc) continue;
      this.options.onMatch?.(hit.kind, by ? 'cancelled' : 'matched');
      matches.push({
        position,
        bankId: hit.bank.id,
        bankName: hit.bank.name,
        kind: hit.kind,
        distance: hit.distance,
        hashId: hit.hashId,
        metadata: doc.metadata,
        action: hit.bank.action,
        ...(hit.bank.policyId ? { policyId: hit.bank.policyId } : {}),
        ...(by ? { cancelledBy: by.hashId } : {}),
      });
    }
    const { flood } = this.options;
    if (!flood || matches.length === 0) return matches;
    const floods = new Map(found.map(({ hit }) => [hit.bank.id, hit.bank.flood]));
    return flood.screen(tenantId, matches, (bankId) => floods.get(bankId), of);
  }
}
