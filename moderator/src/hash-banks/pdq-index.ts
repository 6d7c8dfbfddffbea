import { hashWords } from '../engine/images/pdq/hamming';
import { SlotKeys } from './slot-keys';

/** Chunks a 256-bit hash is cut into for the index: 16 of 16 bits. */
const CHUNKS = 16;
/** The largest distance the index answers for: up to 3 flipped bits per chunk probed (697 buckets a chunk). */
export const MAX_INDEX_DISTANCE = CHUNKS * 4 - 1;
/** Bucket values (of one chunk) whose postings share one array: 32 consecutive values. */
const GROUP_BITS = 5;
const GROUP = 1 << GROUP_BITS;
const GROUP_MASK = GROUP - 1;
const GROUPS_PER_CHUNK = 1 << (16 - GROUP_BITS);
/** A group's array starts with the start of each of its buckets, then its length; its postings follow. */
const HEADER = GROUP + 1;
/** Slots a page of hashes and tags holds. */
const PAGE_BITS = 16;
const PAGE = 1 << PAGE_BITS;
const PAGE_MASK = PAGE - 1;
/** The largest tag add takes: tags are kept plus one in a Uint16Array, 0 marking a free slot. */
const MAX_TAG = 0xfffe;

/** A near match in the index: the slot's key and its distance to the query. */
export interface PdqHit<K> {
  key: K;
  distance: number;
}

/**
 * PDQ hashes indexed for near lookups by multi-index hashing (Norouzi, Punjani and Fleet): each hash is cut into 16
 * chunks of 16 bits and filed under each chunk's value. Two hashes within distance d have, by the pigeonhole
 * principle, a chunk within ⌊d/16⌋ bits of each other, so a lookup probes, in each chunk, the buckets of the values
 * within that many bits (at distance 31: 17 a chunk, 272 in all) and checks each hash found there in full.
 *
 * Layout, without an object per hash: a hash is a slot (an integer). Its 256 bits are in pages of a Uint32Array
 * (32 bytes a slot), its tag (the caller's small integer, a bank) in pages of a Uint16Array, its key in SlotKeys.
 * A bucket's postings (its slots) are contiguous, so a lookup reads them in order: the buckets of 32 consecutive
 * values of a chunk share one Uint32Array (a group), sorted by value, behind a header of where each bucket starts.
 * Adding or removing a hash moves the postings after it within its 16 groups (1/2048 of each chunk's), in place:
 * no rebuild, whatever the size. A group's array grows by a sixteenth, so postings cost about 68 bytes a hash.
 */
export class PdqIndex<K> {
  private wordPages: Uint32Array[] = [];
  private tagPages: Uint16Array[] = [];
  private readonly groups: (Uint32Array | undefined)[] = new Array<Uint32Array | undefined>(CHUNKS * GROUPS_PER_CHUNK);
  private readonly keys = new SlotKeys<K>();
  private readonly free: number[] = [];
  /** Slots ever used: every live slot is below. */
  private end = 0;
  private count = 0;

  get size(): number {
    return this.count;
  }

  has(key: K): boolean {
    return this.keys.slotOf(key) !== undefined;
  }

  /** Files `hex` (64 hex digits) under `key` with `tag` (0 to MAX_TAG), replacing what the key held. */
  add(key: K, hex: string, tag = 0): void {
    if (!Number.isInteger(tag) || tag < 0 || tag > MAX_TAG) throw new RangeError(`tag must be 0 to ${MAX_TAG}`);
    const words = hashWords(hex);
    this.remove(key);
    const slot = this.free.pop() ?? this.end++;
    this.ensurePages(slot);
    this.wordPages[slot >>> PAGE_BITS]!.set(words, (slot & PAGE_MASK) << 3);
    this.tagPages[slot >>> PAGE_BITS]![slot & PAGE_MASK] = tag + 1;
    this.keys.set(key, slot);
    for (let chunk = 0; chunk < CHUNKS; chunk++) this.post(chunk, chunkOf(words, chunk), slot);
    this.count++;
  }

  remove(key: K): boolean {
    const slot = this.keys.slotOf(key);
    if (slot === undefined) return false;
    this.removeSlot(key, slot);
    return true;
  }

  /** The tag `key` was added with, or undefined when it is not indexed. */
  tagOf(key: K): number | undefined {
    const slot = this.keys.slotOf(key);
    return slot === undefined ? undefined : this.tagPages[slot >>> PAGE_BITS]![slot & PAGE_MASK]! - 1;
  }

  /** Removes every hash added with `tag` (a visit of every slot); returns how many. */
  removeTagged(tag: number): number {
    let removed = 0;
    for (let slot = 0; slot < this.end; slot++) {
      if (this.tagPages[slot >>> PAGE_BITS]![slot & PAGE_MASK] !== tag + 1) continue;
      this.removeSlot(this.keys.keyOf(slot)!, slot);
      removed++;
    }
    return removed;
  }

  /** Every hash within `maxDistance` (0 to MAX_INDEX_DISTANCE) of `hex`, nearest first. */
  near(hex: string, maxDistance: number): PdqHit<K>[] {
    if (!Number.isInteger(maxDistance) || maxDistance < 0 || maxDistance > MAX_INDEX_DISTANCE) {
      throw new RangeError(`distance must be 0 to ${MAX_INDEX_DISTANCE}`);
    }
    const query = hashWords(hex);
    const [q0, q1, q2, q3, q4, q5, q6, q7] = Array.from(query, (word) => word | 0) as Words;
    const masks = MASKS_WITHIN[maxDistance >>> 4]!;
    const pages = this.wordPages;
    const groups = this.groups;
    // A hash near the query usually shares several chunks with it: it is checked once per shared bucket (cheaper than
    // remembering every candidate), and only the hits are deduplicated.
    let hitSlots: Set<number> | undefined;
    const hits: PdqHit<K>[] = [];
    for (let chunk = 0; chunk < CHUNKS; chunk++) {
      const value = chunkOf(query, chunk);
      const groupBase = chunk * GROUPS_PER_CHUNK;
      for (let m = 0; m < masks.length; m++) {
        const probe = value ^ masks[m]!;
        const group = groups[groupBase + (probe >>> GROUP_BITS)];
        if (group === undefined) continue;
        const lo = probe & GROUP_MASK;
        const stop = HEADER + group[lo + 1]!;
        for (let at = HEADER + group[lo]!; at < stop; at++) {
          const slot = group[at]!;
          const words = pages[slot >>> PAGE_BITS]!;
          const base = (slot & PAGE_MASK) << 3;
          // Most candidates are far: two words (64 bits) usually rule them out, four always do for distances < 64.
          let distance = popcount32(q0 ^ words[base]!) + popcount32(q1 ^ words[base + 1]!);
          if (distance > maxDistance) continue;
          distance += popcount32(q2 ^ words[base + 2]!) + popcount32(q3 ^ words[base + 3]!);
          if (distance > maxDistance) continue;
          distance +=
            popcount32(q4 ^ words[base + 4]!) +
            popcount32(q5 ^ words[base + 5]!) +
            popcount32(q6 ^ words[base + 6]!) +
            popcount32(q7 ^ words[base + 7]!);
          if (distance > maxDistance) continue;
          hitSlots ??= new Set<number>();
          if (hitSlots.has(slot)) continue;
          hitSlots.add(slot);
          hits.push({ key: this.keys.keyOf(slot)!, distance });
        }
      }
    }
    return hits.sort((a, b) => a.distance - b.distance);
  }

  /** Every hash within `maxDistance` of `hex` by comparing with each: the index's check, and the bench's peer. */
  scan(hex: string, maxDistance: number): PdqHit<K>[] {
    const query = hashWords(hex);
    const hits: PdqHit<K>[] = [];
    for (let slot = 0; slot < this.end; slot++) {
      if (this.tagPages[slot >>> PAGE_BITS]![slot & PAGE_MASK] === 0) continue;
      const distance = this.distanceTo(query, slot);
      if (distance <= maxDistance) hits.push({ key: this.keys.keyOf(slot)!, distance });
    }
    return hits.sort((a, b) => a.distance - b.distance);
  }

  /** The distance between two indexed hashes, or undefined when either is not indexed. */
  distanceBetween(a: K, b: K): number | undefined {
    const slotA = this.keys.slotOf(a);
    const slotB = this.keys.slotOf(b);
    if (slotA === undefined || slotB === undefined) return undefined;
    const base = (slotA & PAGE_MASK) << 3;
    return this.distanceTo(this.wordPages[slotA >>> PAGE_BITS]!.subarray(base, base + 8), slotB);
  }

  /** Bytes the index holds in typed arrays (hashes, tags, postings, keys), for the bench's cross-check. */
  get byteLength(): number {
    let bytes = this.keys.byteLength;
    for (const page of this.wordPages) bytes += page.byteLength;
    for (const page of this.tagPages) bytes += page.byteLength;
    for (const group of this.groups) bytes += group?.byteLength ?? 0;
    return bytes;
  }

  private removeSlot(key: K, slot: number): void {
    const words = this.wordPages[slot >>> PAGE_BITS]!;
    const base = (slot & PAGE_MASK) << 3;
    for (let chunk = 0; chunk < CHUNKS; chunk++) this.unpost(chunk, chunkOf(words, chunk, base), slot);
    this.tagPages[slot >>> PAGE_BITS]![slot & PAGE_MASK] = 0;
    this.keys.delete(key, slot);
    this.free.push(slot);
    this.count--;
  }

  /** Files `slot` at the end of the bucket of `value` in `chunk`. */
  private post(chunk: number, value: number, slot: number): void {
    const which = chunk * GROUPS_PER_CHUNK + (value >>> GROUP_BITS);
    let group = this.groups[which] ?? new Uint32Array(HEADER + 4);
    const length = group[GROUP]!;
    if (HEADER + length >= group.length) {
      const grown = new Uint32Array(HEADER + length + (length >>> 4) + 4);
      grown.set(group);
      group = grown;
    }
    this.groups[which] = group;
    const lo = value & GROUP_MASK;
    const at = HEADER + group[lo + 1]!;
    group.copyWithin(at + 1, at, HEADER + length);
    group[at] = slot;
    for (let i = lo + 1; i <= GROUP; i++) group[i]!++;
  }

  private unpost(chunk: number, value: number, slot: number): void {
    const which = chunk * GROUPS_PER_CHUNK + (value >>> GROUP_BITS);
    let group = this.groups[which];
    if (!group) return;
    const lo = value & GROUP_MASK;
    const stop = HEADER + group[lo + 1]!;
    let at = HEADER + group[lo]!;
    while (at < stop && group[at] !== slot) at++;
    if (at === stop) return;
    const length = group[GROUP]!;
    group.copyWithin(at, at + 1, HEADER + length);
    for (let i = lo + 1; i <= GROUP; i++) group[i]!--;
    if (length === 1) {
      this.groups[which] = undefined;
      return;
    }
    // Give memory back once a group is less than half full (its postings were removed).
    if (HEADER + 2 * length < group.length - 8) {
      group = group.slice(0, HEADER + length + (length >>> 4) + 4);
      this.groups[which] = group;
    }
  }

  private ensurePages(slot: number): void {
    const page = slot >>> PAGE_BITS;
    while (this.wordPages.length <= page) {
      this.wordPages.push(new Uint32Array(0));
      this.tagPages.push(new Uint16Array(0));
    }
    const within = slot & PAGE_MASK;
    if (within < this.tagPages[page]!.length) return;
    // The first page doubles from 64 slots (a small bank stays small); later pages are allocated whole.
    const slots = page === 0 ? Math.min(PAGE, Math.max(64, this.tagPages[0]!.length * 2)) : PAGE;
    const words = new Uint32Array(slots * 8);
    words.set(this.wordPages[page]!);
    this.wordPages[page] = words;
    const tags = new Uint16Array(slots);
    tags.set(this.tagPages[page]!);
    this.tagPages[page] = tags;
  }

  private distanceTo(query: Uint32Array, slot: number): number {
    const words = this.wordPages[slot >>> PAGE_BITS]!;
    const base = (slot & PAGE_MASK) << 3;
    let distance = 0;
    for (let i = 0; i < 8; i++) distance += popcount32(query[i]! ^ words[base + i]!);
    return distance;
  }
}

type Words = [number, number, number, number, number, number, number, number];

/** The 16-bit chunk `chunk` of a hash's words (starting at `base`): chunk 0 is the first four hex digits. */
function chunkOf(words: Uint32Array, chunk: number, base = 0): number {
  const word = words[base + (chunk >> 1)]!;
  return (chunk & 1) === 0 ? word >>> 16 : word & 0xffff;
}

/** For radius r (0 to 3), every 16-bit mask of at most r set bits: a chunk's probes are its value XOR each. */
const MASKS_WITHIN: Uint16Array[] = [0, 1, 2, 3].map((radius) => {
  const masks: number[] = [];
  for (let mask = 0; mask < 1 << 16; mask++) if (popcount32(mask) <= radius) masks.push(mask);
  return Uint16Array.from(masks.sort((a, b) => popcount32(a) - popcount32(b) || a - b));
});

/** Set bits of a 32-bit word (signed or not), by the usual SWAR steps. */
function popcount32(word: number): number {
  let v = word - ((word >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  v = (v + (v >>> 4)) & 0x0f0f0f0f;
  return Math.imul(v, 0x01010101) >>> 24;
}
