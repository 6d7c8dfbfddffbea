import { SlotBook, slotEnd, slotName } from './outbox-slots';

/** A book on a clock the test moves, and a marker insert that records its slots and fails when told. */
function bookWorld(start = 1_000_000_000_500) {
  const clock = { now: start };
  const book = new SlotBook('inst', () => clock.now);
  const inserts: string[] = [];
  let failNext = 0;
  const insert = (slot: string) => {
    inserts.push(slot);
    if (failNext > 0) {
      failNext -= 1;
      return Promise.reject(new Error('reply lost'));
    }
    return Promise.resolve();
  };
  return { clock, book, inserts, insert, fail: (count = 1) => (failNext = count) };
}

describe('outbox slot names', () => {
  it.each([
    ['inst', 1_000_000_000_500, 'inst:1000000000', 1_000_000_001_000],
    ['01HZX', 999, '01HZX:0', 1_000],
  ])('names %s at %d %s, ending at %d', (owner, at, name, end) => {
    expect(slotName(owner, at)).toBe(name);
    expect(slotEnd(name)).toBe(end);
  });

  it('gives no end for an event id', () => {
    expect(slotEnd('01HZXABCDEFGHJKMNPQRSTVWXY')).toBeNaN();
  });
});

describe('the slot book of a process', () => {
  it('inserts one marker per slot, before any append of it goes on, however many appends share it', async () => {
    const w = bookWorld();
    const slots = await Promise.all([w.book.begin(w.insert), w.book.begin(w.insert), w.book.begin(w.insert)]);
    expect(new Set(slots)).toEqual(new Set(['inst:1000000000']));
    expect(w.inserts).toEqual(['inst:1000000000']);
    expect(w.book.inFlight('inst:1000000000')).toBe(true);
    w.clock.now += 1_000;
    expect(await w.book.begin(w.insert)).toBe('inst:1000000001');
    expect(w.inserts).toEqual(['inst:1000000000', 'inst:1000000001']);
  });

  it('fails an append whose marker insert failed or lost its reply, and inserts the marker again for the next', async () => {
    const w = bookWorld();
    w.fail();
    await expect(w.book.begin(w.insert)).rejects.toThrow('reply lost');
    expect(w.book.inFlight('inst:1000000000')).toBe(false);
    const slot = await w.book.begin(w.insert);
    expect(w.inserts).toEqual([slot, slot]);
  });

  it('gives a marker up only once its second is over, no append of it is in flight and all its events are out', async () => {
    const w = bookWorld();
    const first = await w.book.begin(w.insert);
    const second = await w.book.begin(w.insert);
    w.book.end(first, ['e1', 'e2'], true);
    expect(w.book.slotOf('e1')).toBe(first);
    w.book.published(['e1', 'e2']);
    // Still its second, and an append of it in flight.
    expect(w.book.takeRemovable()).toEqual([]);
    w.clock.now += 1_000;
    expect(w.book.takeRemovable()).toEqual([]);
    w.book.end(second, ['e3'], true);
    expect(w.book.takeRemovable()).toEqual([]);
    w.book.published(['e3']);
    expect(w.book.isPending('e3')).toBe(false);
    expect(w.book.takeRemovable()).toEqual([first]);
    // Given up once: forgotten, so never twice.
    expect(w.book.takeRemovable()).toEqual([]);
    expect(w.book.size).toBe(0);
  });

  it('never gives up a slot with an append that failed without proof: a sweep reads it from the store', async () => {
    const w = bookWorld();
    const slot = await w.book.begin(w.insert);
    w.book.end(slot, [], false);
    w.clock.now += 5_000;
    expect(w.book.uncertain(slot)).toBe(true);
    expect(w.book.takeRemovable()).toEqual([]);
    w.book.forget(slot);
    expect(w.book.has(slot)).toBe(false);
  });

  it('gives up a marker whose every insert failed, which a lost reply may have written all the same', async () => {
    const w = bookWorld();
    w.fail();
    await expect(w.book.begin(w.insert)).rejects.toThrow('reply lost');
    w.clock.now += 1_000;
    expect(w.book.takeRemovable()).toEqual(['inst:1000000000']);
  });

  it('says when a slot done but for its second closes', async () => {
    const w = bookWorld();
    const slot = await w.book.begin(w.insert);
    expect(w.book.closesIn()).toBe(Number.POSITIVE_INFINITY);
    w.book.end(slot, [], true);
    expect(w.book.closesIn()).toBe(500);
    w.clock.now += 500;
    expect(w.book.takeRemovable()).toEqual([slot]);
    expect(w.book.closesIn()).toBe(Number.POSITIVE_INFINITY);
  });

  it('says a slot done while current, whose second ended before its marker was taken, closes now', async () => {
    const w = bookWorld();
    const slot = await w.book.begin(w.insert);
    w.book.end(slot, [], true);
    // The relay took the removable slots while this one was current; then its second ended.
    expect(w.book.takeRemovable()).toEqual([]);
    w.clock.now += 700;
    expect(w.book.closesIn()).toBe(0);
    expect(w.book.takeRemovable()).toEqual([slot]);
  });
});
