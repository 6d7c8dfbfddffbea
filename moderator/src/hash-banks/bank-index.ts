import type { BankAction, HashKind } from '@vigil/proto';
import type { FloodLimit } from './bank-rules';
import { PdqIndex, type PdqHit } from './pdq-index';

/** What matching needs of a bank. */
export interface BankInfo {
  id: string;
  name: string;
  kind: HashKind;
  /** PDQ banks: the largest distance that matches; 0 for exact kinds. */
  distance: number;
  negative: boolean;
  enabled: boolean;
  action: BankAction;
  policyId?: string;
  flood?: FloodLimit;
}

/** What matching needs of a bank's hash: it is in the index only while it acts (enabled, not deconfirmed). */
export interface HashEntry {
  id: string;
  bankId: string;
  value: string;
}

/** The hashes of one image (the record's, or a lookup's); any may be missing. */
export interface QueryHashes {
  md5?: string;
  sha256?: string;
  pdq?: string;
}

/** A bank hash that an image's hash matched. */
export interface BankHit {
  bank: BankInfo;
  hashId: string;
  kind: HashKind;
  distance: number;
}

/** Matches of one image: the positive ones that act, and those a negative bank cancelled (with the canceller). */
export interface MatchOutcome {
  matches: BankHit[];
  cancelled: { hit: BankHit; by: BankHit }[];
}

/**
 * One tenant's banks in memory: exact hashes in maps by value, PDQ hashes in a multi-index (PdqIndex), each change
 * applied in place. Disabled banks keep their hashes indexed (enabling one again costs nothing) but never match.
 * A PDQ hash's bank is its tag in the PdqIndex (a number per bank), so a PDQ hash costs no object or Map entry.
 */
export class BankIndex {
  private readonly banks = new Map<string, BankInfo>();
  /** Each bank's number (a PDQ hash's tag), and back; a removed bank's number is taken again. */
  private readonly numbers = new Map<string, number>();
  private readonly numbered: (string | undefined)[] = [];
  /** Each exact hash's bank id (the bank's own string, shared by all its hashes: no copy per hash). */
  private readonly bankIdOf = new Map<string, string>();
  /** The values of exact hashes (a PDQ hash's value is in the PdqIndex only). */
  private readonly exactValues = new Map<string, string>();
  private readonly exact = new Map<string, Set<string>>();
  private readonly pdq = new PdqIndex<string>();

  get bankCount(): number {
    return this.banks.size;
  }

  get hashCount(): number {
    return this.bankIdOf.size + this.pdq.size;
  }

  /** Bytes the PDQ index holds in typed arrays (the bench's cross-check of its memory figure). */
  get pdqByteLength(): number {
    return this.pdq.byteLength;
  }

  /** Whether any bank acts: with none, images need not be hashed for matching. */
  get active(): boolean {
    for (const bank of this.banks.values()) if (bank.enabled) return true;
    return false;
  }

  bank(id: string): BankInfo | undefined {
    return this.banks.get(id);
  }

  putBank(bank: BankInfo): void {
    const before = this.banks.get(bank.id);
    if (before && before.kind !== bank.kind) this.dropHashesOf(bank.id);
    this.banks.set(bank.id, bank);
    if (!this.numbers.has(bank.id)) {
      let number = this.numbered.indexOf(undefined);
      if (number < 0) number = this.numbered.length;
      this.numbered[number] = bank.id;
      this.numbers.set(bank.id, number);
    }
  }

  removeBank(id: string): void {
    this.dropHashesOf(id);
    this.banks.delete(id);
    const number = this.numbers.get(id);
    if (number === undefined) return;
    this.numbers.delete(id);
    this.numbered[number] = undefined;
  }

  putHash(entry: HashEntry): void {
    const bank = this.banks.get(entry.bankId);
    if (!bank) return;
    this.removeHash(entry.id);
    if (bank.kind === 'pdq') {
      this.pdq.add(entry.id, entry.value, this.numbers.get(bank.id));
    } else {
      this.bankIdOf.set(entry.id, bank.id);
      this.exactValues.set(entry.id, entry.value);
      const key = exactKey(bank.kind, entry.value);
      const ids = this.exact.get(key) ?? new Set<string>();
      ids.add(entry.id);
      this.exact.set(key, ids);
    }
  }

  /** The PDQ hashes within `maxDistance` of `hex`, found by comparing with each (no index): the bench's peer. */
  scanPdq(hex: string, maxDistance: number): PdqHit<string>[] {
    return this.pdq.scan(hex, maxDistance);
  }

  removeHash(id: string): void {
    if (this.pdq.remove(id) || !this.bankIdOf.delete(id)) return;
    const value = this.exactValues.get(id);
    if (value === undefined) return;
    this.exactValues.delete(id);
    for (const kind of ['md5', 'sha256'] as const) {
      const key = exactKey(kind, value);
      const ids = this.exact.get(key);
      if (ids?.delete(id) && ids.size === 0) this.exact.delete(key);
    }
  }

  /**
   * The enabled banks' matches of one image. A negative bank's match cancels the positive matches it covers: a PDQ
   * negative hash covers the positive PDQ hashes within the negative bank's distance of it; an exact negative match
   * (the very file is known harmless) covers every match of the image.
   */
  match(query: QueryHashes): MatchOutcome {
    const hits: BankHit[] = [];
    for (const kind of ['md5', 'sha256'] as const) {
      const value = query[kind];
      if (!value) continue;
      for (const id of this.exact.get(exactKey(kind, value)) ?? []) {
        const bank = this.bankOf(id);
        if (bank?.enabled) hits.push({ bank, hashId: id, kind, distance: 0 });
      }
    }
    if (query.pdq) {
      const widest = this.widestPdqDistance();
      if (widest >= 0) {
        for (const { key, distance } of this.pdq.near(query.pdq, widest)) {
          const bank = this.pdqBankOf(key);
          if (bank?.enabled && distance <= bank.distance) hits.push({ bank, hashId: key, kind: 'pdq', distance });
        }
      }
    }
    const negatives = hits.filter((hit) => hit.bank.negative);
    const outcome: MatchOutcome = { matches: [], cancelled: [] };
    for (const hit of hits) {
      if (hit.bank.negative) continue;
      const by = negatives.find((negative) => this.covers(negative, hit));
      if (by) outcome.cancelled.push({ hit, by });
      else outcome.matches.push(hit);
    }
    outcome.matches.sort((a, b) => a.distance - b.distance);
    return outcome;
  }

  private covers(negative: BankHit, positive: BankHit): boolean {
    if (negative.kind !== 'pdq') return true;
    if (positive.kind !== 'pdq') return false;
    const between = this.pdq.distanceBetween(negative.hashId, positive.hashId);
    return between !== undefined && between <= negative.distance;
  }

  private bankOf(hashId: string): BankInfo | undefined {
    const bankId = this.bankIdOf.get(hashId);
    return bankId === undefined ? undefined : this.banks.get(bankId);
  }

  private pdqBankOf(hashId: string): BankInfo | undefined {
    const number = this.pdq.tagOf(hashId);
    const bankId = number === undefined ? undefined : this.numbered[number];
    return bankId === undefined ? undefined : this.banks.get(bankId);
  }

  private widestPdqDistance(): number {
    let widest = -1;
    for (const bank of this.banks.values()) {
      if (bank.enabled && bank.kind === 'pdq') widest = Math.max(widest, bank.distance);
    }
    return widest;
  }

  private dropHashesOf(bankId: string): void {
    const number = this.numbers.get(bankId);
    if (number !== undefined) this.pdq.removeTagged(number);
    for (const [id, of] of [...this.bankIdOf]) if (of === bankId) this.removeHash(id);
  }
}

const exactKey = (kind: HashKind, value: string): string => `${kind}:${value.toLowerCase()}`;
