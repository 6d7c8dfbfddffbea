import {
  BankAction,
  DEFAULT_FLOOD_WINDOW_SECONDS,
  DEFAULT_PDQ_DISTANCE,
  HASH_BANK_LIMITS,
  HashKind,
  HashMetadata,
  HashReview,
  MAX_PDQ_DISTANCE,
  type HashMatchRecord,
  type ImageHashRecord,
  type Policy,
} from '@vigil/proto';
import { HASH_PATTERN, type FloodLimit } from './bank-rules';
import { ValidationError } from '../domain/errors';
import type { ImageFetcher } from '../engine/images/fetch';
import type { HashBankMatcher } from './bank-matcher';
import { parseHashCsv } from './csv-import';
import type { BankDoc, BankFields, BankPatch, HashBankStore, HashDoc } from './hash-bank-store';
import type { RetroQueue } from './retro/retro-queue';
import type { RetroPassDoc } from './retro/retro-pass-store';

export interface HashBankUseCasesDeps {
  store: HashBankStore;
  matcher: HashBankMatcher;
  /** The tenant's policies (its settings): a bank names one of them, or `default`. */
  policiesOf: (tenantId: string) => Promise<readonly Policy[]>;
  /** Fetches a lookup's image under the image address policy; without it, lookups take hashes only. */
  fetcher?: ImageFetcher;
  fetchTimeoutMs: number;
  /** Queues a retroactive pass when hashes start to act (retro/retro-queue.ts). */
  retro?: Pick<RetroQueue, 'queue' | 'last'>;
}

export interface NewBank {
  name: string;
  description?: string;
  kind: string;
  distance?: number;
  policyId?: string;
  action: string;
  negative: boolean;
  enabled?: boolean;
  /** Flood quarantine: matches a window allows (absent: off), and the window in seconds. */
  floodThreshold?: number;
  floodWindowSeconds?: number;
}

export interface BankChange {
  name?: string;
  description?: string | null;
  distance?: number;
  policyId?: string | null;
  action?: string;
  negative?: boolean;
  enabled?: boolean;
  /** null turns flood quarantine off; a threshold alone keeps the bank's window (or takes the default). */
  floodThreshold?: number | null;
  floodWindowSeconds?: number;
}

export type LookupInput = { kind: string; value: string } | { imageUrl: string };

export interface LookupResult {
  image?: ImageHashRecord;
  matches: HashMatchRecord[];
  cancelled: HashMatchRecord[];
  failure?: string;
}

/**
 * What the API does with hash banks: every input checked again here (the gateway's schemas are the first check), the
 * store written through HashBankStore (whose changes every replica's index applies), lookups answered without a
 * record.
 */
export class HashBankUseCases {
  constructor(private readonly deps: HashBankUseCasesDeps) {}

  listBanks(tenantId: string): Promise<BankDoc[]> {
    return this.deps.store.listBanks(tenantId);
  }

  getBank(tenantId: string, bankId: string): Promise<BankDoc> {
    return this.deps.store.getBank(tenantId, bankId);
  }

  async createBank(tenantId: string, input: NewBank): Promise<BankDoc> {
    const kind = parsed(HashKind, input.kind, 'kind');
    const fields: BankFields = {
      name: checkedName(input.name),
      ...(input.description ? { description: checkedDescription(input.description) } : {}),
      kind,
      distance: kind === 'pdq' ? checkedDistance(input.distance ?? DEFAULT_PDQ_DISTANCE) : 0,
      action: parsed(BankAction, input.action || 'flag', 'action'),
      negative: input.negative,
      enabled: input.enabled ?? true,
    };
    if (kind !== 'pdq' && input.distance) invalid('distance', 'only a pdq bank has a match distance');
    const flood = floodOf(input.floodThreshold, input.floodWindowSeconds, undefined);
    if (flood) fields.flood = flood;
    if (input.policyId) fields.policyId = await this.checkedPolicy(tenantId, input.policyId);
    return this.deps.store.createBank(tenantId, fields);
  }

  async updateBank(tenantId: string, bankId: string, change: BankChange): Promise<BankDoc> {
    const bank = await this.deps.store.getBank(tenantId, bankId);
    const patch: BankPatch = {};
    if (change.name !== undefined) patch.name = checkedName(change.name);
    if (change.description !== undefined) {
      patch.description = change.description === null ? null : checkedDescription(change.description);
    }
    if (change.distance !== undefined) {
      if (bank.kind !== 'pdq') invalid('distance', 'only a pdq bank has a match distance');
      patch.distance = checkedDistance(change.distance);
    }
    if (change.action !== undefined) patch.action = parsed(BankAction, change.action, 'action');
    if (change.negative !== undefined) patch.negative = change.negative;
    if (change.enabled !== undefined) patch.enabled = change.enabled;
    if (change.floodThreshold === null) {
      if (change.floodWindowSeconds !== undefined) invalid('floodWindowSeconds', 'no window without a threshold');
      patch.flood = null;
    } else if (change.floodThreshold !== undefined || change.floodWindowSeconds !== undefined) {
      patch.flood = floodOf(change.floodThreshold ?? bank.flood?.threshold, change.floodWindowSeconds, bank.flood);
    }
    if (change.policyId === null) patch.policyId = null;
    else if (change.policyId !== undefined) patch.policyId = await this.checkedPolicy(tenantId, change.policyId);
    return this.deps.store.updateBank(tenantId, bankId, patch);
  }

  deleteBank(tenantId: string, bankId: string): Promise<void> {
    return this.deps.store.deleteBank(tenantId, bankId);
  }

  /** Hashes one by one (each with its metadata) or a CSV file in HMA's format; all or none are added. */
  async addHashes(
    tenantId: string,
    bankId: string,
    input: { hashes: { value: string; metadataJson?: string }[]; csv?: string },
  ): Promise<{ added: HashDoc[]; duplicates: number }> {
    const bank = await this.deps.store.getBank(tenantId, bankId);
    if (input.csv && input.hashes.length > 0) invalid('csv', 'send hashes or a csv file, not both');
    let rows: { value: string; metadata: HashMetadata }[];
    if (input.csv) {
      rows = parseHashCsv(input.csv, bank.kind);
    } else {
      if (input.hashes.length === 0) invalid('hashes', 'at least one hash');
      if (input.hashes.length > HASH_BANK_LIMITS.importRows) {
        invalid('hashes', `at most ${HASH_BANK_LIMITS.importRows} hashes`);
      }
      rows = input.hashes.map((hash, index) => ({
        value: checkedHash(bank.kind, hash.value, ['hashes', index, 'value']),
        metadata: metadataOf(hash.metadataJson, ['hashes', index, 'metadata']),
      }));
    }
    const { retro } = this.deps;
    // The pass is the add's follow-up: hashes an add left without one (it failed after writing them) get it when
    // they are added again, instead of counting as duplicates.
    return this.deps.store.addHashes(
      tenantId,
      bankId,
      rows,
      retro && {
        writer: 'api',
        run: async (added) => {
          await retro.queue(bank, added, 'added');
        },
      },
    );
  }

  /** The bank's newest retroactive pass, if any. */
  async lastRetroPass(tenantId: string, bankId: string): Promise<RetroPassDoc | undefined> {
    await this.deps.store.getBank(tenantId, bankId);
    return this.deps.retro?.last(bankId);
  }

  listHashes(tenantId: string, bankId: string, page: { limit: number; startingAfter?: string }) {
    const limit = page.limit > 0 ? Math.min(page.limit, HASH_BANK_LIMITS.page) : 20;
    return this.deps.store.listHashes(tenantId, bankId, { limit, startingAfter: page.startingAfter || undefined });
  }

  getHash(tenantId: string, bankId: string, hashId: string): Promise<HashDoc> {
    return this.deps.store.getHash(tenantId, bankId, hashId);
  }

  /** A hash that acts again (enabled, or no longer deconfirmed) is matched against stored records, as a new one is. */
  async updateHash(
    tenantId: string,
    bankId: string,
    hashId: string,
    change: { enabled?: boolean; review?: string; metadataJson?: string },
  ): Promise<HashDoc> {
    const patch = {
      ...(change.enabled !== undefined ? { enabled: change.enabled } : {}),
      ...(change.review !== undefined ? { review: parsed(HashReview, change.review, 'review') } : {}),
      ...(change.metadataJson !== undefined ? { metadata: metadataOf(change.metadataJson, ['metadata']) } : {}),
    };
    const before = this.deps.retro && (await this.deps.store.getHash(tenantId, bankId, hashId));
    const after = await this.deps.store.updateHash(tenantId, bankId, hashId, patch);
    if (this.deps.retro && before && !acts(before) && acts(after)) {
      const bank = await this.deps.store.getBank(tenantId, bankId);
      await this.deps.retro.queue(bank, [after], before.enabled ? 'confirmed' : 'enabled');
    }
    return after;
  }

  withdrawHash(tenantId: string, bankId: string, hashId: string): Promise<void> {
    return this.deps.store.withdrawHash(tenantId, bankId, hashId);
  }

  /** The matches of a hash, or of an image fetched and hashed now, in the tenant's enabled banks. Stores nothing. */
  async lookup(tenantId: string, input: LookupInput, signal?: AbortSignal): Promise<LookupResult> {
    const { matcher } = this.deps;
    let image: ImageHashRecord;
    if ('imageUrl' in input) {
      const { fetcher } = this.deps;
      if (!fetcher) invalid('imageUrl', 'this moderator does not fetch images');
      const timeout = AbortSignal.timeout(this.deps.fetchTimeoutMs);
      const fetched = await fetcher.fetch(input.imageUrl, signal ? AbortSignal.any([signal, timeout]) : timeout);
      if (!fetched.ok) return { matches: [], cancelled: [], failure: fetched.failure };
      const hashes = await matcher.hash(tenantId, fetched.bytes, signal);
      if (!hashes) return { matches: [], cancelled: [], failure: 'budget' };
      image = {
        position: 1,
        md5: hashes.md5,
        sha256: hashes.sha256,
        ...(hashes.pdq ? { pdq: hashes.pdq.hash, pdqQuality: hashes.pdq.quality } : { pdqFailure: hashes.failure }),
      };
    } else {
      const kind = parsed(HashKind, input.kind, 'kind');
      const value = checkedHash(kind, input.value, ['value']);
      // A bare hash matches banks of its own kind only: md5 and sha256 given as the other kinds' fields stay empty.
      image = { position: 0, md5: '', sha256: '', [kind]: value };
    }
    const all = await matcher.match(tenantId, [image]);
    return {
      ...('imageUrl' in input ? { image } : {}),
      matches: all.filter((match) => match.cancelledBy === undefined),
      cancelled: all.filter((match) => match.cancelledBy !== undefined),
    };
  }

  private async checkedPolicy(tenantId: string, policyId: string): Promise<string> {
    if (policyId === 'default') return policyId;
    const policies = await this.deps.policiesOf(tenantId);
    if (!policies.some((policy) => policy.id === policyId)) invalid('policyId', 'no such policy');
    return policyId;
  }
}

/** A hash matches while it is enabled and not deconfirmed. */
const acts = (hash: HashDoc): boolean => hash.enabled && hash.review !== 'deconfirmed';

function invalid(path: string | (string | number)[], message: string): never {
  const where = Array.isArray(path) ? path : [path];
  throw new ValidationError(message, { issues: [{ path: where, message }] });
}

function parsed<T>(
  schema: { safeParse(value: unknown): { success: true; data: T } | { success: false } },
  value: unknown,
  path: string,
): T {
  const result = schema.safeParse(value);
  if (!result.success) invalid(path, 'not an allowed value');
  return result.data;
}

function checkedName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > HASH_BANK_LIMITS.bankName) {
    invalid('name', `1 to ${HASH_BANK_LIMITS.bankName} characters`);
  }
  return trimmed;
}

function checkedDescription(description: string): string {
  if (description.length > HASH_BANK_LIMITS.bankDescription) {
    invalid('description', `at most ${HASH_BANK_LIMITS.bankDescription} characters`);
  }
  return description;
}

function checkedDistance(distance: number): number {
  if (!Number.isInteger(distance) || distance < 0 || distance > MAX_PDQ_DISTANCE) {
    invalid('distance', `0 to ${MAX_PDQ_DISTANCE}`);
  }
  return distance;
}

/** A bank's flood limit from a threshold and a window (each checked); no threshold: off. */
export function floodOf(
  threshold: number | undefined,
  windowSeconds: number | undefined,
  current: FloodLimit | undefined,
): FloodLimit | undefined {
  if (threshold === undefined) {
    if (windowSeconds !== undefined) invalid('floodWindowSeconds', 'no window without a threshold');
    return undefined;
  }
  if (!Number.isInteger(threshold) || threshold < 1 || threshold > HASH_BANK_LIMITS.floodThreshold) {
    invalid('floodThreshold', `1 to ${HASH_BANK_LIMITS.floodThreshold} matches`);
  }
  const window = windowSeconds ?? current?.windowSeconds ?? DEFAULT_FLOOD_WINDOW_SECONDS;
  if (
    !Number.isInteger(window) ||
    window < HASH_BANK_LIMITS.floodWindowMin ||
    window > HASH_BANK_LIMITS.floodWindowMax
  ) {
    invalid('floodWindowSeconds', `${HASH_BANK_LIMITS.floodWindowMin} to ${HASH_BANK_LIMITS.floodWindowMax} seconds`);
  }
  return { threshold, windowSeconds: window };
}

function checkedHash(kind: HashKind, value: string, path: (string | number)[]): string {
  const lower = value.trim().toLowerCase();
  if (!HASH_PATTERN[kind].test(lower)) {
    invalid(path, `not a ${kind} hash (${kind === 'md5' ? 32 : 64} hex digits)`);
  }
  return lower;
}

function metadataOf(json: string | undefined, path: (string | number)[]): HashMetadata {
  if (!json) return {};
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    invalid(path, 'not JSON');
  }
  const result = HashMetadata.safeParse(value);
  if (!result.success) {
    throw new ValidationError('invalid metadata', {
      issues: result.error.issues.map((issue) => ({
        path: [...path, ...issue.path.map(String)],
        message: issue.message,
      })),
    });
  }
  return result.data;
}
