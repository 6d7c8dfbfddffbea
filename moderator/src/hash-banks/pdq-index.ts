import { hashWords } from '../engine/images/pdq/hamming';

/** Chunks a 256-bit hash is cut into for the index: 16 of 16 bits. */
const CHUNKS = 16;
const CHUNK_VALUES = 1 << 16;
/** The largest distance the index answers for: up to 3 flipped bits per chunk probed (697 buckets a chunk). */
export const MAX_INDEX_DISTANCE = CHUNKS * 4 - 1;

/** A near match in the index: the slot's key and its distance to the query. */
export interface PdqHit<K> {
  key: K;
  distance: number;
}

/**
 * PDQ hashes indexed for near lookups by multi-index hashing (Norouzi, Punjani and Fleet): each hash is cut into 16
 * chunks of 16 bits and filed under each chunk's value. Two hashes within distance d have, by the pigeonhole
 * principle, a chunk within ⌊d/16⌋ bits of each other, so a lookup probes, in each chunk, the buckets of the values
 * within that many bits (at distance 31: 17 a chunk, 272 in all) and checks each hash found there in full. A hash is
 * added or removed in place: no rebuild, whatever the size.
 *
 * Layout, without an object per hash: the hashes in one typed array (32 bytes a slot), and each chunk's buckets as
 * chains through a typed array of next slots (4 bytes a slot and chunk, 64 in all). A bucket's first slot is kept in a
 * Map while the index is small and in a 65,536-entry typed array (256 KiB a chunk) once it holds SMALL_INDEX slots.
 */
export class PdqIndex<K> {
  private capacity = 0;
  private words = new Uint32Array(0);
  /** Per chunk, the next slot in the same bucket (-1 at a chain's end). */
  private next: Int32Array[] = [];
  private heads: Map<number, number>[] | Int32Array[] = Array.from({ length: CHUNKS }, () => new Map<number, number>());
  private keys: (K | undefined)[] = [];
  private readonly free: number[] = [];
  private readonly slotOf = new Map<K, number>();

  get size(): number {
    return this.slotOf.size;
  }

  has(key: K): boolean {
    return this.slotOf.has(key);
  }

  /** Files `hex` (64 hex digits) under `key`, replacing what the key held. */
  add(key: K, hex: string): void {
    const words = hashWords(hex);
    this.remove(key);
    const slot = this.free.pop() ?? this.keys.length;
    if (slot >= this.capacity) this.grow(Math.max(64, this.capacity * 2));
    if (slot >= SMALL_INDEX && !(this.heads[0] instanceof Int32Array)) this.denseHeads();
    this.words.set(words, slot * 8);
    this.keys[slot] = key;
    this.slotOf.set(key, slot);
    for (let chunk = 0; chunk < CHUNKS; chunk++) {
      const value = chunkOf(words, chunk);
      this.next[chunk]![slot] = this.headOf(chunk, value);
      this.setHead(chunk, value, slot);
    }
  }

  remove(key: K): boolean {
    const slot = this.slotOf.get(key);
    if (slot === undefined) return false;
    for (let chunk = 0; chunk < CHUNKS; chunk++) {
      const value = chunkOf(this.words, chunk, slot * 8);
      const next = this.next[chunk]!;
      let at = this.headOf(chunk, value);
      if (at === slot) {
        this.setHead(chunk, value, next[slot]!);
      } else {
        while (at !== -1 && next[at] !== slot) at = next[at]!;
        if (at !== -1) next[at] = next[slot]!;
      }
      next[slot] = -1;
    }
    this.words.fill(0, slot * 8, slot * 8 + 8);
    this.keys[slot] = undefined;
    this.slotOf.delete(key);
    this.free.push(slot);
    return true;
  }

  /** Every hash within `maxDistance` (0 to MAX_INDEX_DISTANCE) of `hex`, nearest first. */
  near(hex: string, maxDistance: number): PdqHit<K>[] {
    if (!Number.isInteger(maxDistance) || maxDistance < 0 || maxDistance > MAX_INDEX_DISTANCE) {
      throw new RangeError(`distance must be 0 to ${MAX_INDEX_DISTANCE}`);
    }
    const query = hashWords(hex);
    const radius = Math.floor(maxDistance / CHUNKS);
    // A hash near the query usually shares several chunks with it: it is checked once per shared bucket (cheaper than
    // remembering every candidate), and only the hits are deduplicated.
    const hitSlots = new Set<number>();
    const hits: PdqHit<K>[] = [];
    const words = this.words;
    for (let chunk = 0; chunk < CHUNKS; chunk++) {
      const next = this.next[chunk];
      if (!next) break;
      forEachWithin(chunkOf(query, chunk), radius, (probe) => {
        for (let slot = this.headOf(chunk, probe); slot !== -1; slot = next[slot]!) {
          const base = slot * 8;
          let distance = 0;
          for (let i = 0; i < 8 && distance <= maxDistance; i++) {
            distance += popcount32((query[i]! ^ words[base + i]!) >>> 0);
          }
          if (distance <= maxDistance && !hitSlots.has(slot)) {
            hitSlots.add(slot);
            hits.push({ key: this.keys[slot]!, distance });
          }
        }
      });
    }
    return hits.sort((a, b) => a.distance - b.distance);
  }

  /** Every hash within `maxDistance` of `hex` by comparing with each: the index's check, and the bench's peer. */
  scan(hex: string, maxDistance: number): PdqHit<K>[] {
    const query = hashWords(hex);
    const hits: PdqHit<K>[] = [];
    for (const [key, slot] of this.slotOf) {
      const distance = this.distanceTo(query, slot);
      if (distance <= maxDistance) hits.push({ key, distance });
    }
    return hits.sort((a, b) => a.distance - b.distance);
  }

  /** The distance between two indexed hashes, or undefined when either is not indexed. */
  distanceBetween(a: K, b: K): number | undefined {
    const slotA = this.slotOf.get(a);
    const slotB = this.slotOf.get(b);
    if (slotA === undefined || slotB === undefined) return undefined;
    return this.distanceTo(this.words.subarray(slotA * 8, slotA * 8 + 8), slotB);
  }

  private distanceTo(query: Uint32Array, slot: number): number {
    const base = slot * 8;
    let distance = 0;
    for (let i = 0; i < 8; i++) distance += popcount32((query[i]! ^ this.words[base + i]!) >>> 0);
    return distance;
  }

  private headOf(chunk: number, value: number): number {
    const heads = this.heads[chunk]!;
    return heads instanceof Int32Array ? heads[value]! : (heads.get(value) ?? -1);
  }

  private setHead(chunk: number, value: number, slot: number): void {
    const heads = this.heads[chunk]!;
    if (heads instanceof Int32Array) heads[value] = slot;
    else if (slot === -1) heads.delete(value);
    else heads.set(value, slot);
  }

  private denseHeads(): void {
    this.heads = (this.heads as Map<number, number>[]).map((map) => {
      const dense = new Int32Array(CHUNK_VALUES).fill(-1);
      for (const [value, slot] of map) dense[value] = slot;
      return dense;
    });
  }

  private grow(capacity: number): void {
    const words = new Uint32Array(capacity * 8);
    words.set(this.words);
    this.words = words;
    this.next = Array.from({ length: CHUNKS }, (_, chunk) => {
      const next = new Int32Array(capacity).fill(-1);
      const old = this.next[chunk];
      if (old) next.set(old);
      return next;
    });
    this.capacity = capacity;
  }
}

/** Slots from which the bucket heads are a typed array (4 MiB in all) rather than Maps. */
const SMALL_INDEX = 8192;

/** The 16-bit chunk `chunk` of a hash's words (starting at `base`): chunk 0 is the first four hex digits. */
function chunkOf(words: Uint32Array, chunk: number, base = 0): number {
  const word = words[base + (chunk >> 1)]!;
  return chunk % 2 === 0 ? word >>> 16 : word & 0xffff;
}

/** Calls `visit` with every 16-bit value within `radius` flipped bits of `value` (itself included). */
function forEachWithin(value: number, radius: number, visit: (probe: number) => void): void {
  const flip = (from: number, start: number, left: number): void => {
    visit(from);
    if (left === 0) return;
    for (let bit = start; bit < 16; bit++) flip(from ^ (1 << bit), bit + 1, left - 1);
  };
  flip(value, 0, radius);
}

function popcount32(word: number): number {
  let v = word - ((word >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  v = (v + (v >>> 4)) & 0x0f0f0f0f;
  return Math.imul(v, 0x01010101) >>> 24;
}
