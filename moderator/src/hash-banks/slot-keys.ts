/** Slots a page of ids holds; a page is allocated whole once a second page is needed. */
const PAGE_BITS = 16;
const PAGE = 1 << PAGE_BITS;
const PAGE_MASK = PAGE - 1;
/** A hash id as the store makes it (hash-bank-store.ts, hashIdOf): the prefix and 22 base64url characters. */
const HASH_ID = /^hsh_[A-Za-z0-9_-]{22}$/;
const PREFIX = 'hsh_';
const ID_CHARS = 22;
/** 22 characters of 6 bits in 17 bytes (the last character in a byte of its own, beside the packed mark). */
const ID_BYTES = 17;
/** The id tables are split by the id's digest (its low 8 bits), so that growing one rehashes 1/256 of the ids. */
const SEGMENT_BITS = 8;
const SEGMENTS = 1 << SEGMENT_BITS;
const SEGMENT_MASK = SEGMENTS - 1;
const EMPTY = -1;

/**
 * The keys of an index's slots, both ways, without a string or a Map entry per key: a hash id's 22 characters decoded
 * into 17 bytes of a packed array (132 bits, and a bit marking the slot as packed), and its slot in open-addressing
 * tables of Int32 (linear probing, from 8/15 to 4/5 full, so about 6 bytes an id). Other keys (numbers, other
 * strings) go in Maps.
 */
export class SlotKeys<K> {
  private readonly pages: Uint8Array[] = [];
  private readonly segments: (Int32Array | undefined)[] = new Array<Int32Array | undefined>(SEGMENTS);
  private readonly filled = new Uint32Array(SEGMENTS);
  private readonly otherSlots = new Map<K, number>();
  private readonly otherKeys = new Map<number, K>();
  /** The bytes of the key being looked up. */
  private readonly scratch = new Uint8Array(ID_BYTES);

  slotOf(key: K): number | undefined {
    if (!isHashId(key)) return this.otherSlots.get(key);
    const hash = digest(encode(key, this.scratch, 0), 0);
    const segment = this.segments[hash & SEGMENT_MASK];
    if (!segment) return undefined;
    for (let at = home(hash, segment.length); ; at = at + 1 === segment.length ? 0 : at + 1) {
      const slot = segment[at]!;
      if (slot === EMPTY) return undefined;
      if (this.holds(slot)) return slot;
    }
  }

  keyOf(slot: number): K | undefined {
    const page = this.pages[slot >>> PAGE_BITS];
    const base = (slot & PAGE_MASK) * ID_BYTES;
    if (!page || base >= page.length || (page[base + ID_BYTES - 2]! & PACKED) === 0) return this.otherKeys.get(slot);
    return decode(page, base) as K;
  }

  /** Files `key` (not held yet) at `slot` (free). */
  set(key: K, slot: number): void {
    if (!isHashId(key)) {
      this.otherSlots.set(key, slot);
      this.otherKeys.set(slot, key);
      return;
    }
    const page = this.pageFor(slot);
    const base = (slot & PAGE_MASK) * ID_BYTES;
    const hash = digest(encode(key, page, base), base);
    const which = hash & SEGMENT_MASK;
    let segment = this.segments[which] ?? this.resize(which, 8);
    if ((this.filled[which]! + 1) * 5 > segment.length * 4)
      segment = this.resize(which, Math.ceil(segment.length * 1.5));
    place(segment, hash, slot);
    this.filled[which]!++;
  }

  delete(key: K, slot: number): void {
    if (!isHashId(key)) {
      this.otherSlots.delete(key);
      this.otherKeys.delete(slot);
      return;
    }
    const hash = this.digestOfSlot(slot);
    const which = hash & SEGMENT_MASK;
    const segment = this.segments[which];
    if (!segment) return;
    const size = segment.length;
    let hole = home(hash, size);
    while (segment[hole] !== slot) {
      if (segment[hole] === EMPTY) return;
      hole = hole + 1 === size ? 0 : hole + 1;
    }
    // Backward-shift deletion: later entries of the probe run move into the hole, so no tombstones accumulate.
    for (let at = hole + 1 === size ? 0 : hole + 1; segment[at] !== EMPTY; at = at + 1 === size ? 0 : at + 1) {
      const from = home(this.digestOfSlot(segment[at]!), size);
      const fits = hole <= at ? from <= hole || from > at : from <= hole && from > at;
      if (fits) {
        segment[hole] = segment[at]!;
        hole = at;
      }
    }
    segment[hole] = EMPTY;
    this.filled[which]!--;
    this.pages[slot >>> PAGE_BITS]!.fill(0, (slot & PAGE_MASK) * ID_BYTES, ((slot & PAGE_MASK) + 1) * ID_BYTES);
  }

  /** Bytes held in typed arrays (the Maps of other keys aside). */
  get byteLength(): number {
    let bytes = this.filled.byteLength + this.scratch.byteLength;
    for (const page of this.pages) bytes += page.byteLength;
    for (const segment of this.segments) bytes += segment?.byteLength ?? 0;
    return bytes;
  }

  /** Whether `slot` holds the key in scratch. */
  private holds(slot: number): boolean {
    const page = this.pages[slot >>> PAGE_BITS];
    const base = (slot & PAGE_MASK) * ID_BYTES;
    if (!page || base >= page.length) return false;
    for (let i = 0; i < ID_BYTES; i++) if (page[base + i] !== this.scratch[i]) return false;
    return true;
  }

  private digestOfSlot(slot: number): number {
    return digest(this.pages[slot >>> PAGE_BITS]!, (slot & PAGE_MASK) * ID_BYTES);
  }

  /** The page holding `slot`'s id, grown (doubling, while it is the only page) to reach it. */
  private pageFor(slot: number): Uint8Array {
    const index = slot >>> PAGE_BITS;
    while (this.pages.length <= index) this.pages.push(new Uint8Array(0));
    const page = this.pages[index]!;
    const needed = ((slot & PAGE_MASK) + 1) * ID_BYTES;
    if (page.length >= needed) return page;
    const slots = index === 0 ? Math.min(PAGE, Math.max(64, (page.length / ID_BYTES) * 2)) : PAGE;
    const grown = new Uint8Array(Math.max(needed, slots * ID_BYTES));
    grown.set(page);
    this.pages[index] = grown;
    return grown;
  }

  private resize(which: number, size: number): Int32Array {
    const segment = new Int32Array(size).fill(EMPTY);
    for (const slot of this.segments[which] ?? []) {
      if (slot !== EMPTY) place(segment, this.digestOfSlot(slot), slot);
    }
    this.segments[which] = segment;
    return segment;
  }
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const SIXBITS = new Uint8Array(128);
for (let i = 0; i < BASE64URL.length; i++) SIXBITS[BASE64URL.charCodeAt(i)] = i;
/** Set in the second last byte of a packed id (whose character takes 6 of its 8 bits). */
const PACKED = 0x80;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

function isHashId(key: unknown): key is string {
  return typeof key === 'string' && key.length === PREFIX.length + ID_CHARS && HASH_ID.test(key);
}

/** Writes the id's 22 characters as 17 bytes at `base`: 5 groups of 4 characters in 3 bytes, then 2 bytes of one. */
function encode(id: string, into: Uint8Array, base: number): Uint8Array {
  let at = PREFIX.length;
  for (let group = 0; group < 5; group++, at += 4) {
    const bits =
      (SIXBITS[id.charCodeAt(at)]! << 18) |
      (SIXBITS[id.charCodeAt(at + 1)]! << 12) |
      (SIXBITS[id.charCodeAt(at + 2)]! << 6) |
      SIXBITS[id.charCodeAt(at + 3)]!;
    into[base + group * 3] = bits >>> 16;
    into[base + group * 3 + 1] = (bits >>> 8) & 0xff;
    into[base + group * 3 + 2] = bits & 0xff;
  }
  into[base + 15] = SIXBITS[id.charCodeAt(at)]! | PACKED;
  into[base + 16] = SIXBITS[id.charCodeAt(at + 1)]!;
  return into;
}

function decode(from: Uint8Array, base: number): string {
  let id = PREFIX;
  for (let group = 0; group < 5; group++) {
    const bits = (from[base + group * 3]! << 16) | (from[base + group * 3 + 1]! << 8) | from[base + group * 3 + 2]!;
    id +=
      BASE64URL[bits >>> 18]! + BASE64URL[(bits >>> 12) & 63]! + BASE64URL[(bits >>> 6) & 63]! + BASE64URL[bits & 63]!;
  }
  return id + BASE64URL[from[base + 15]! & 63]! + BASE64URL[from[base + 16]!]!;
}

/** FNV-1a over a packed id's 17 bytes. */
function digest(bytes: Uint8Array, base: number): number {
  let hash = FNV_OFFSET;
  for (let i = 0; i < ID_BYTES; i++) hash = Math.imul(hash ^ bytes[base + i]!, FNV_PRIME);
  return hash >>> 0;
}

/** Where a digest's probe starts in a table of `size`: its top 24 bits scaled (the low 8 chose the table). */
function home(hash: number, size: number): number {
  return Math.floor(((hash >>> 8) * size) / 0x1000000);
}

function place(segment: Int32Array, hash: number, slot: number): void {
  let at = home(hash, segment.length);
  while (segment[at] !== EMPTY) at = at + 1 === segment.length ? 0 : at + 1;
  segment[at] = slot;
}
