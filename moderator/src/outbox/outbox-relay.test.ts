import { HEADERS, type DomainEvent } from '@vigil/proto';
import type { Producer } from 'kafkajs';
import pino from 'pino';
import { waitFor } from '../../../deploy/test-support';
import { sizedEvent } from '../../test/support/events';
import type { DeadLetterStore } from '../store/dead-letter-store';
import type { EventDoc } from '../store/event-doc';
import type { OutboxStore } from '../store/outbox-store';
import { SlotBook } from '../store/outbox-slots';
import { OutboxRelay } from './outbox-relay';

/**
 * The relay's own logic around a broker and a store in memory. With `held`, the broker's sends wait until released,
 * so what decides back-pressure (the relay's queue) holds still; the store takes every removal and records it.
 */
function relayWorld({
  memoryBytes,
  held = false,
  pollMs = 3_600_000,
  sweepMaxMs,
  now,
  failSends = [],
  appendBoundMs,
}: {
  memoryBytes?: number;
  held?: boolean;
  pollMs?: number;
  sweepMaxMs?: number;
  now?: () => number;
  /** The sends (counted from 0) that fail as with a broker away (nothing about a message). */
  failSends?: number[];
  appendBoundMs?: number;
} = {}) {
  const sent: string[] = [];
  const replayed: string[] = [];
  /** The store's outbox documents, and the events of each slot. */
  const stored = { outbox: [] as Array<{ _id: string }>, slots: new Map<string, EventDoc[]>() };
  const sweeps: number[] = [];
  const removals: string[][] = [];
  let release: () => void = () => undefined;
  let sends = 0;
  const gate = held ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve();
  const producer = {
    connect: () => Promise.resolve(),
    disconnect: () => Promise.resolve(),
    send: async ({ messages }: { messages: Array<{ key: string; headers: Record<string, string> }> }) => {
      await gate;
      sends += 1;
      if (failSends.includes(sends - 1)) {
        throw Object.assign(new Error('connection refused'), { retriable: true });
      }
      sent.push(...messages.map((message) => message.key));
      replayed.push(
        ...messages.filter((m) => m.headers[HEADERS.replayed] === '1').map((m) => m.headers[HEADERS.eventId]!),
      );
      return [];
    },
  } as unknown as Producer;
  const clock = { now: 1_000_000_000_500 };
  const slots = new SlotBook('test', now ?? (() => clock.now));
  const outbox = {
    instanceId: 'test',
    slots,
    removeEntries: (entries: Array<{ _id: string }>) => {
      removals.push(entries.map((entry) => entry._id));
      const gone = new Set(entries.map((entry) => entry._id));
      stored.outbox = stored.outbox.filter((doc) => !gone.has(doc._id));
      return Promise.resolve();
    },
    unpublished: () => {
      sweeps.push(Date.now());
      return Promise.resolve([...stored.outbox]);
    },
    storedIds: (ids: string[]) => Promise.resolve(new Set(ids)),
    slotEvents: (slot: string) => Promise.resolve(stored.slots.get(slot) ?? []),
  } as unknown as OutboxStore;
  /** Appends events through the book, as EventAppends does: the slot's marker first, then the events in it. */
  const append = async (events: readonly DomainEvent[]) => {
    const slot = await slots.begin(() => Promise.resolve());
    slots.end(
      slot,
      events.map((event) => event.id),
      true,
    );
    return slot;
  };
  const relay = new OutboxRelay({
    outbox,
    deadLetters: {} as DeadLetterStore,
    createProducer: () => producer,
    topic: 'events',
    log: pino({ level: 'silent' }),
    pollMs,
    sweepMaxMs,
    minGapMs: 0,
    batchSize: 1,
    memoryBytes,
    appendBoundMs,
  });
  return { relay, sent, replayed, removals, sweeps, clock, stored, slots, append, release: () => release() };
}

/** Runs `body` over a relay world on jest's clock from `now`, then stops its relay. */
async function onRelayClock(
  now: number,
  options: Parameters<typeof relayWorld>[0],
  body: (world: ReturnType<typeof relayWorld>) => Promise<void>,
): Promise<void> {
  jest.useFakeTimers({ now });
  const world = relayWorld(options);
  try {
    await body(world);
  } finally {
    const stopping = world.relay.stop();
    await jest.advanceTimersByTimeAsync(2_000);
    await stopping;
    jest.useRealTimers();
  }
}

/** Events stored in `slot`, as an append stores them. */
function storeInSlot(world: ReturnType<typeof relayWorld>, slot: string, events: readonly DomainEvent[]): void {
  world.stored.slots.set(
    slot,
    events.map((event) => ({ ...event, _id: event.id, slot })),
  );
}

describe('outbox relay back-pressure', () => {
  it('has room while its queue is under an eighth of the memory bound, and none past it until it drains', async () => {
    const world = relayWorld({ memoryBytes: 16_000, held: true });
    world.relay.start();
    try {
      // A stopped or idle relay never holds appends back.
      expect(await world.relay.room(10)).toBe(true);
      world.relay.appended([sizedEvent(500)]);
      expect(await world.relay.room(10)).toBe(true);
      // Past 2,000 bytes queued (an eighth of 16,000): appends wait, for at most the time asked.
      world.relay.appended([sizedEvent(1500), sizedEvent(1500)]);
      expect(world.relay.memoryQueued).toBeGreaterThan(2000);
      expect(await world.relay.room(50)).toBe(false);
      // A waiter is released as soon as the relay has published its way back under the mark.
      const waiting = world.relay.room(60_000);
      world.release();
      await expect(waiting).resolves.toBe(true);
      expect(world.relay.memoryQueued).toBeLessThanOrEqual(2000);
    } finally {
      world.release();
      await world.relay.stop();
    }
    expect(world.sent.length).toBeGreaterThanOrEqual(2);
  });
});

describe('outbox relay removals', () => {
  it('takes the markers of the slots of several published batches out in one removal, once their seconds are over', async () => {
    const world = relayWorld();
    world.relay.start();
    try {
      const events = [sizedEvent(100), sizedEvent(100), sizedEvent(100)];
      const first = await world.append(events.slice(0, 2));
      world.relay.appended(events.slice(0, 2));
      world.clock.now += 1_000;
      const second = await world.append(events.slice(2));
      world.relay.appended(events.slice(2));
      await waitFor(() => world.sent.length === 3, { timeoutMs: 10_000, intervalMs: 10, what: 'three batches sent' });
      // The first slot is closed and published, the second still open: its second is not over.
      world.clock.now += 1_000;
      world.relay.wake();
      await waitFor(() => world.removals.length > 0, { timeoutMs: 10_000, intervalMs: 10, what: 'a removal' });
      expect(world.removals).toEqual([[first, second]]);
    } finally {
      await world.relay.stop();
    }
    expect(world.removals).toHaveLength(1);
  });

  it('keeps the marker of a slot with an event not published yet', async () => {
    const world = relayWorld();
    world.relay.start();
    const events = [sizedEvent(100), sizedEvent(100)];
    await world.append(events);
    // Only one of the two handed over (the other's commit failed after its append): the slot waits for a sweep.
    world.relay.appended(events.slice(0, 1));
    await waitFor(() => world.sent.length === 1, { timeoutMs: 10_000, intervalMs: 10, what: 'the batch sent' });
    world.clock.now += 1_000;
    await world.relay.stop();
    expect(world.removals).toEqual([]);
  });

  it('sends the events of a failed send again from memory, in order, and then takes their marker out', async () => {
    // A short poll interval makes the backoff after a failure short; the sweep leaves own slots alone for a minute.
    const world = relayWorld({ pollMs: 10, failSends: [0, 1] });
    world.relay.start();
    try {
      const events = [sizedEvent(100), sizedEvent(100), sizedEvent(100)];
      const slot = await world.append(events);
      world.relay.appended(events);
      await waitFor(() => world.sent.length === 3, { timeoutMs: 10_000, intervalMs: 10, what: 'three events sent' });
      expect(world.sent).toEqual(events.map((event) => event.stream));
      expect(world.replayed).toEqual([]);
      expect(world.relay.memoryQueued).toBe(0);
      world.clock.now += 1_000;
      world.relay.wake();
      await waitFor(() => world.removals.length > 0, { timeoutMs: 10_000, intervalMs: 10, what: 'the removal' });
      expect(world.removals).toEqual([[slot]]);
    } finally {
      await world.relay.stop();
    }
  });

  it('reads an overflow slot again after its publish failed, and publishes it in order', async () => {
    // Slots on real time, as the sweep's: a routine sweep leaves this process's slot alone for a minute.
    const world = relayWorld({ pollMs: 10, memoryBytes: 600, failSends: [2], now: () => Date.now() });
    const events = [sizedEvent(100), sizedEvent(100), sizedEvent(100)];
    // Appended in one second: past the memory bound, the second and third are read back from their slot, and the
    // publish of the slot's last batch fails.
    const slot = await world.append(events);
    world.stored.outbox.push({ _id: slot });
    storeInSlot(world, slot, events);
    world.relay.start();
    try {
      world.relay.appended(events.slice(0, 1));
      expect(world.relay.memoryQueued).toBeGreaterThan(0);
      world.relay.appended(events.slice(1));
      await waitFor(() => world.sent.length === 3, { timeoutMs: 10_000, intervalMs: 10, what: 'three events sent' });
      expect(world.sent).toEqual(events.map((event) => event.stream));
      // Sent by the overflow path, not left to a sweep.
      expect(world.replayed).toEqual([]);
      // The marker goes once the slot's second is over.
      await waitFor(() => world.removals.length > 0, { timeoutMs: 10_000, intervalMs: 10, what: 'the removal' });
      expect(world.removals).toEqual([[slot]]);
    } finally {
      await world.relay.stop();
    }
  });

  it('takes out what it published when it stops, whatever the removal delay left', async () => {
    const world = relayWorld();
    world.relay.start();
    const event = sizedEvent(100);
    const slot = await world.append([event]);
    world.relay.appended([event]);
    await waitFor(() => world.sent.length === 1, { timeoutMs: 10_000, intervalMs: 10, what: 'the batch sent' });
    world.clock.now += 1_000;
    await world.relay.stop();
    expect(world.removals).toEqual([[slot]]);
  });
});

describe('outbox relay sweeps', () => {
  it('backs off while its sweeps find nothing, up to the longest interval, its own appends or not, until woken', () =>
    onRelayClock(1_000_000, { pollMs: 100, sweepMaxMs: 800 }, async (world) => {
      world.relay.start();
      await jest.advanceTimersByTimeAsync(5_000);
      const gaps = world.sweeps.slice(1).map((at, index) => at - world.sweeps[index]!);
      // 200, 400, then 800 each: under ten sweeps in 5 s instead of fifty.
      expect(gaps.slice(0, 4)).toEqual([200, 400, 800, 800]);
      expect(world.relay.sweepIntervalMs()).toBe(800);
      expect(world.sweeps.length).toBeLessThan(10);
      // Its own appends go out from memory, and the sweep keeps its pace.
      world.relay.appended([sizedEvent(100)]);
      await jest.advanceTimersByTimeAsync(1_000);
      expect(world.sent).toHaveLength(1);
      expect(world.relay.sweepIntervalMs()).toBe(800);
      // A wake-up (a replay put events back) sweeps now, and at the usual pace after.
      const sweeps = world.sweeps.length;
      world.relay.wake();
      await jest.advanceTimersByTimeAsync(0);
      expect(world.sweeps.length).toBe(sweeps + 1);
      expect(world.relay.sweepIntervalMs()).toBeLessThanOrEqual(200);
    }));

  it('sweeps every poll interval when no longest interval is set', () =>
    onRelayClock(1_000_000, { pollMs: 100 }, async (world) => {
      world.relay.start();
      await jest.advanceTimersByTimeAsync(1_000);
      expect(world.relay.sweepIntervalMs()).toBe(100);
      expect(world.sweeps.length).toBeGreaterThanOrEqual(9);
    }));
});

describe('outbox relay sweeps of slots', () => {
  it('leaves a slot of its own alone while its append is in flight, and reads it a minute after its second', () =>
    onRelayClock(1_000_000_000_000, { pollMs: 100, sweepMaxMs: 1_000, now: () => Date.now() }, async (world) => {
      // An append failed without proof of what it stored: its event is there, its process never heard so.
      const slot = await world.slots.begin(() => Promise.resolve());
      const event = sizedEvent(100);
      world.stored.outbox.push({ _id: slot });
      world.stored.slots.set(slot, [{ ...event, _id: event.id, slot }]);
      world.relay.start();
      await jest.advanceTimersByTimeAsync(90_000);
      // In flight: never read, whatever its age.
      expect(world.sent).toEqual([]);
      world.slots.end(slot, [], false);
      await jest.advanceTimersByTimeAsync(30_000);
      expect(world.replayed).toEqual([event.id]);
      // Its marker stays until no append of it can land any more, and the event is not published again meanwhile.
      expect(world.removals).toEqual([]);
      await jest.advanceTimersByTimeAsync(5 * 60_000);
      expect(world.removals).toEqual([[slot]]);
      expect(world.sent).toHaveLength(1);
      expect(world.slots.has(slot)).toBe(false);
    }));

  it("reads another process's slot once its second is three seconds over, publishing its events marked replayed", () =>
    onRelayClock(1_000_000_000_000, { pollMs: 100, sweepMaxMs: 200, now: () => Date.now() }, async (world) => {
      const slot = `other:${Math.floor(Date.now() / 1000)}`;
      const events = [sizedEvent(100), sizedEvent(100)];
      world.stored.outbox.push({ _id: slot });
      storeInSlot(world, slot, events);
      world.relay.start();
      await jest.advanceTimersByTimeAsync(2_500);
      expect(world.sent).toEqual([]);
      await jest.advanceTimersByTimeAsync(2_000);
      expect(world.replayed).toEqual(events.map((event) => event.id));
    }));

  it('reads a slot of its own whose append was left uncertain, even once another process took its marker out', () =>
    onRelayClock(
      1_000_000_000_000,
      { pollMs: 100, sweepMaxMs: 200, now: () => Date.now(), appendBoundMs: 10_000 },
      async (world) => {
        const events = [sizedEvent(100)];
        // An append whose reply was lost: it landed, and the slot's marker is gone from the outbox.
        const slot = await world.slots.begin(() => Promise.resolve());
        world.slots.end(slot, [], false);
        storeInSlot(world, slot, events);
        world.relay.start();
        await jest.advanceTimersByTimeAsync(62_000);
        expect(world.replayed).toEqual(events.map((event) => event.id));
        // Once no append of it can land any more, it is forgotten.
        await jest.advanceTimersByTimeAsync(12_000);
        expect(world.slots.has(slot)).toBe(false);
      },
    ));

  it("takes another process's marker out only once the append bound has passed since it was found, whatever its name says", () =>
    onRelayClock(
      1_000_000_000_000,
      { pollMs: 100, sweepMaxMs: 200, now: () => Date.now(), appendBoundMs: 10_000 },
      async (world) => {
        // Its writer's clock runs ten minutes behind this one: by its name, the slot is long over.
        const slot = `other:${Math.floor((Date.now() - 600_000) / 1000)}`;
        const events = [sizedEvent(100)];
        world.stored.outbox.push({ _id: slot });
        storeInSlot(world, slot, events);
        world.relay.start();
        await jest.advanceTimersByTimeAsync(1_000);
        expect(world.replayed).toEqual(events.map((event) => event.id));
        // An append of the slot may still be on its way: the marker stays, and the slot is read again.
        await jest.advanceTimersByTimeAsync(9_000);
        expect(world.stored.outbox).toEqual([{ _id: slot }]);
        await jest.advanceTimersByTimeAsync(2_500);
        expect(world.stored.outbox).toEqual([]);
      },
    ));
});
