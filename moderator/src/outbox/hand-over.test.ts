import { sizedEvent } from '../../test/support/events';
import { HandOver } from './hand-over';

/** Slots of 1 event each, named by the event, so the test can tell them apart. */
const slotOf = (id: string) => `slot-${id}`;

describe('the outbox relay’s hand-over memory', () => {
  it('keeps events in memory under its bound, in order, with their messages', () => {
    const handOver = new HandOver(100_000, slotOf);
    const events = [sizedEvent(100), sizedEvent(100), sizedEvent(100)];
    handOver.add(events);
    expect(handOver.length).toBe(3);
    expect(handOver.bytes).toBeGreaterThan(300);
    const taken = handOver.take(2);
    expect(taken.map((entry) => entry.doc._id)).toEqual([events[0]!.id, events[1]!.id]);
    expect(taken[0]!.message.key).toBe(events[0]!.stream);
    expect(handOver.has(events[0]!.id)).toBe(true);
    handOver.release(taken);
    expect(handOver.has(events[0]!.id)).toBe(false);
    expect(handOver.has(events[2]!.id)).toBe(true);
    expect(handOver.length).toBe(1);
  });

  it('past its bound keeps only the slots of further appends, oldest first, until they are read and published', () => {
    const handOver = new HandOver(2_000, slotOf);
    const first = sizedEvent(1_000);
    const over = [sizedEvent(1_500), sizedEvent(10)];
    handOver.add([first]);
    handOver.add([over[0]!]);
    // Once overflowing, even a small append waits in its slot, so that the order of appends holds.
    handOver.add([over[1]!]);
    expect(handOver.length).toBe(1);
    expect(handOver.overflowing).toBe(true);
    expect(handOver.slotsLeft).toBe(2);
    expect(handOver.oldestSlot()).toBe(slotOf(over[0]!.id));
    handOver.slotDone();
    handOver.liftIfCaughtUp();
    expect(handOver.overflowing).toBe(true);
    expect(handOver.oldestSlot()).toBe(slotOf(over[1]!.id));
    handOver.slotDone();
    expect(handOver.overflowing).toBe(true);
    handOver.liftIfCaughtUp();
    expect(handOver.overflowing).toBe(false);
    handOver.add([sizedEvent(10)]);
    expect(handOver.length).toBe(2);
  });

  it('gives room while under an eighth of its bound; a waiter goes on once the queue drains, or gives up', async () => {
    const handOver = new HandOver(8_000, slotOf);
    handOver.add([sizedEvent(500)]);
    expect(handOver.hasRoom()).toBe(true);
    handOver.add([sizedEvent(1_000)]);
    expect(handOver.hasRoom()).toBe(false);
    await expect(handOver.room(10)).resolves.toBe(false);
    const waiting = handOver.room(60_000);
    handOver.releaseWaiters();
    handOver.release(handOver.take(2));
    handOver.releaseWaiters();
    await expect(waiting).resolves.toBe(true);
  });

  it('forgets everything on clear and lets every waiter go on', async () => {
    const handOver = new HandOver(2_000, slotOf);
    handOver.add([sizedEvent(1_500)]);
    handOver.add([sizedEvent(1_500)]);
    const waiting = handOver.room(60_000);
    handOver.clear();
    await expect(waiting).resolves.toBe(true);
    expect([handOver.length, handOver.bytes, handOver.slotsLeft, handOver.overflowing]).toEqual([0, 0, 0, false]);
  });
});
