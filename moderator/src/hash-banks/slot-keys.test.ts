import { createHmac } from 'node:crypto';
import { SlotKeys } from './slot-keys';

/** Ids as the store makes them (hashIdOf): an HMAC's first 22 base64url characters. */
const idOf = (i: number): string =>
  `hsh_${createHmac('sha256', 'salt').update(String(i)).digest('base64url').slice(0, 22)}`;

describe('SlotKeys', () => {
  it('gives back each hash id and slot, both ways, for every base64url character', () => {
    const keys = new SlotKeys<string>();
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const ids = [
      'hsh_' + alphabet.slice(0, 22),
      'hsh_' + alphabet.slice(22, 44),
      'hsh_' + alphabet.slice(42, 64),
      'hsh_' + '_'.repeat(22),
      'hsh_' + 'A'.repeat(22),
    ];
    ids.forEach((id, slot) => keys.set(id, slot));
    ids.forEach((id, slot) => {
      expect(keys.slotOf(id)).toBe(slot);
      expect(keys.keyOf(slot)).toBe(id);
    });
    expect(keys.slotOf('hsh_' + 'B'.repeat(22))).toBeUndefined();
  });

  it('keeps other keys (numbers, other strings) apart', () => {
    const keys = new SlotKeys<string | number>();
    keys.set('h1', 0);
    keys.set(42, 1);
    keys.set('hsh_short', 2);
    keys.set(idOf(1), 3);
    expect([keys.slotOf('h1'), keys.slotOf(42), keys.slotOf('hsh_short'), keys.slotOf(idOf(1))]).toEqual([0, 1, 2, 3]);
    expect([0, 1, 2, 3].map((slot) => keys.keyOf(slot))).toEqual(['h1', 42, 'hsh_short', idOf(1)]);
    keys.delete(42, 1);
    expect(keys.slotOf(42)).toBeUndefined();
    expect(keys.keyOf(1)).toBeUndefined();
  });

  it('finds every id after growth and after deleting most of them in any order, and takes the slots again', () => {
    const keys = new SlotKeys<string>();
    const count = 20_000;
    const all = Array.from({ length: count }, (_, i) => i);
    all.forEach((i) => keys.set(idOf(i), i));
    expect(all.filter((i) => keys.slotOf(idOf(i)) !== i)).toEqual([]);
    // Delete two ids in three, interleaved, so that probe runs are cut in the middle.
    const gone = all.filter((i) => i % 3 !== 0);
    gone.forEach((i) => keys.delete(idOf(i), i));
    expect(all.filter((i) => keys.slotOf(idOf(i)) !== (i % 3 === 0 ? i : undefined))).toEqual([]);
    expect(all.filter((i) => keys.keyOf(i) !== (i % 3 === 0 ? idOf(i) : undefined))).toEqual([]);
    gone.forEach((i) => keys.set(idOf(count + i), i));
    const idAt = (i: number): string => (i % 3 === 0 ? idOf(i) : idOf(count + i));
    expect(all.filter((i) => keys.slotOf(idAt(i)) !== i || keys.keyOf(i) !== idAt(i))).toEqual([]);
  });

  it('holds an id in about 24 bytes of typed arrays', () => {
    const keys = new SlotKeys<string>();
    for (let i = 0; i < 100_000; i++) keys.set(idOf(i), i);
    expect(keys.byteLength / 100_000).toBeLessThan(30);
  });
});
