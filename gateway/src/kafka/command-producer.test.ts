import { EventEmitter } from 'node:events';
import type { Producer, ProducerBatch } from 'kafkajs';
import pino from 'pino';
import { BATCH_MAX_BYTES, CommandProducer, IN_FLIGHT_WAIT_MS, MAX_PRODUCERS } from './command-producer';

/** A stand-in with the two methods the batcher uses; the real producer is exercised in the integration tests. */
function fakeProducer(behaviour: (batch: ProducerBatch) => Promise<unknown>) {
  const batches: ProducerBatch[] = [];
  const emitter = new EventEmitter();
  const producer = {
    events: { DISCONNECT: 'producer.disconnect' },
    on: (event: string, listener: () => void) => emitter.on(event, listener),
    connect: () => Promise.resolve(),
    disconnect: () => Promise.resolve(),
    sendBatch: (batch: ProducerBatch) => {
      batches.push(batch);
      return behaviour(batch);
    },
  };
  return { producer: producer as unknown as Producer, batches };
}

const log = pino({ level: 'silent' });
const command = (i: number, topic = 't') => ({ topic, key: `k${i}`, id: `id${i}`, type: 'IngestRecord', value: { i } });

describe('command producer', () => {
  it('groups concurrent sends into one batch with acks from all replicas and the event headers', async () => {
    const { producer, batches } = fakeProducer(() => Promise.resolve([]));
    const commands = new CommandProducer(() => producer, { batchMax: 100, lingerMs: 5, sendTimeoutMs: 1000 }, log);
    await Promise.all([command(1), command(2), command(3, 'other')].map((c) => commands.send(c)));
    expect(batches).toHaveLength(1);
    expect(batches[0]!.acks).toBe(-1);
    const messages = batches[0]!.topicMessages!.flatMap((tm) => tm.messages.map((m) => ({ topic: tm.topic, ...m })));
    expect(messages).toEqual([
      { topic: 't', key: 'k1', value: '{"i":1}', headers: { 'event-id': 'id1', 'event-type': 'IngestRecord' } },
      { topic: 't', key: 'k2', value: '{"i":2}', headers: { 'event-id': 'id2', 'event-type': 'IngestRecord' } },
      { topic: 'other', key: 'k3', value: '{"i":3}', headers: { 'event-id': 'id3', 'event-type': 'IngestRecord' } },
    ]);
  });

  it('starts a batch as soon as batchMax commands wait', async () => {
    const { producer, batches } = fakeProducer(() => Promise.resolve([]));
    const commands = new CommandProducer(() => producer, { batchMax: 2, lingerMs: 1000, sendTimeoutMs: 5000 }, log);
    await Promise.all([commands.send(command(1)), commands.send(command(2))]);
    expect(batches).toHaveLength(1);
  });

  describe('with a request in flight', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    it('gathers the commands that arrive meanwhile into the next request, sent once it is answered', async () => {
      const answers: Array<() => void> = [];
      const { producer, batches } = fakeProducer(() => new Promise((resolve) => answers.push(() => resolve([]))));
      const commands = new CommandProducer(() => producer, { batchMax: 100, lingerMs: 1, sendTimeoutMs: 5000 }, log);
      const first = commands.send(command(1));
      await jest.advanceTimersByTimeAsync(1);
      expect(batches).toHaveLength(1);
      const later = Promise.all([2, 3, 4].map((i) => commands.send(command(i))));
      // Well past the linger, they still wait for the request in flight.
      await jest.advanceTimersByTimeAsync(IN_FLIGHT_WAIT_MS / 2);
      expect(batches).toHaveLength(1);
      answers.shift()?.();
      await first;
      await jest.advanceTimersByTimeAsync(0);
      expect(batches).toHaveLength(2);
      expect(batches[1]!.topicMessages!.flatMap((tm) => tm.messages.map((m) => m.key))).toEqual(['k2', 'k3', 'k4']);
      answers.shift()?.();
      await later;
    });

    it('sends the commands waiting behind it through another producer once IN_FLIGHT_WAIT_MS has passed', async () => {
      const made: Array<ReturnType<typeof fakeProducer>> = [];
      const commands = new CommandProducer(
        () => {
          // The first producer's request never settles; the others answer at once.
          const fake = fakeProducer(() => (made.length === 1 ? new Promise(() => undefined) : Promise.resolve([])));
          made.push(fake);
          return fake.producer;
        },
        { batchMax: 100, lingerMs: 1, sendTimeoutMs: 60_000 },
        log,
      );
      void commands.send(command(1)).catch(() => undefined);
      await jest.advanceTimersByTimeAsync(1);
      const second = commands.send(command(2));
      await jest.advanceTimersByTimeAsync(IN_FLIGHT_WAIT_MS - 1);
      expect(made.map((fake) => fake.batches.length)).toEqual([1]);
      await jest.advanceTimersByTimeAsync(1);
      await second;
      expect(made.map((fake) => fake.batches.length)).toEqual([1, 1]);
    });

    it('never has two requests in flight on one producer: past MAX_PRODUCERS, commands wait for one', async () => {
      // No request ever settles: each producer's batches are the requests it had in flight at once.
      const made: Array<ReturnType<typeof fakeProducer>> = [];
      const commands = new CommandProducer(
        () => {
          const fake = fakeProducer(() => new Promise(() => undefined));
          made.push(fake);
          return fake.producer;
        },
        { batchMax: 100, lingerMs: 1, sendTimeoutMs: 1000 },
        log,
      );
      const sends: Array<Promise<string>> = [];
      for (let i = 0; i < MAX_PRODUCERS + 2; i += 1) {
        sends.push(
          commands.send(command(i)).then(
            () => 'stored',
            (err: { code: string }) => err.code,
          ),
        );
        await jest.advanceTimersByTimeAsync(IN_FLIGHT_WAIT_MS);
      }
      expect(made.map((fake) => fake.batches.length)).toEqual(Array.from({ length: MAX_PRODUCERS }, () => 1));
      // The requests time out (503) and their producers are replaced: the two waiting commands go through new ones.
      await jest.advanceTimersByTimeAsync(1000);
      expect(made.every((fake) => fake.batches.length <= 1)).toBe(true);
      expect(made.length).toBeGreaterThan(MAX_PRODUCERS);
      await jest.advanceTimersByTimeAsync(1000);
      expect(await Promise.all(sends)).toEqual(Array.from({ length: MAX_PRODUCERS + 2 }, () => 'unavailable'));
      expect(made.every((fake) => fake.batches.length <= 1)).toBe(true);
    });
  });

  it('never puts more than BATCH_MAX_BYTES of commands in one Kafka request', async () => {
    const { producer, batches } = fakeProducer(() => Promise.resolve([]));
    const commands = new CommandProducer(() => producer, { batchMax: 100, lingerMs: 5, sendTimeoutMs: 1000 }, log);
    const large = (i: number) => ({ ...command(i), value: { text: 'x'.repeat(200 * 1024) } });
    await Promise.all([1, 2, 3, 4, 5].map((i) => commands.send(large(i))));
    const sizes = batches.map((batch) =>
      batch.topicMessages!.flatMap((tm) => tm.messages).reduce((sum, m) => sum + String(m.value).length, 0),
    );
    expect(sizes.every((size) => size <= BATCH_MAX_BYTES)).toBe(true);
    expect(batches.flatMap((batch) => batch.topicMessages!.flatMap((tm) => tm.messages))).toHaveLength(5);
  });

  it('rejects every command of a failed batch with unavailable', async () => {
    const { producer } = fakeProducer(() => Promise.reject(new Error('broker down')));
    const commands = new CommandProducer(() => producer, { batchMax: 10, lingerMs: 1, sendTimeoutMs: 1000 }, log);
    const results = await Promise.allSettled([commands.send(command(1)), commands.send(command(2))]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(results.map((r) => (r as PromiseRejectedResult).reason as { code: string }).map((e) => e.code)).toEqual([
      'unavailable',
      'unavailable',
    ]);
  });

  it('rejects a send that has not been acknowledged within the send timeout', async () => {
    const { producer } = fakeProducer(() => new Promise(() => undefined));
    const commands = new CommandProducer(() => producer, { batchMax: 10, lingerMs: 0, sendTimeoutMs: 20 }, log);
    await expect(commands.send(command(1))).rejects.toMatchObject({ code: 'unavailable', retriable: true });
  });

  it('sends through a new producer after a failed send (kafkajs rolled back sequences the broker had written)', async () => {
    const made: Array<ReturnType<typeof fakeProducer>> = [];
    let fail = true;
    const commands = new CommandProducer(
      () => {
        const made1 = fakeProducer(() => (fail ? Promise.reject(new Error('not leader')) : Promise.resolve([])));
        made.push(made1);
        return made1.producer;
      },
      { batchMax: 10, lingerMs: 1, sendTimeoutMs: 1000 },
      log,
    );
    await expect(commands.send(command(1))).rejects.toThrow('the command could not be stored');
    fail = false;
    await commands.send(command(2));
    expect(made).toHaveLength(2);
    expect(made[0]!.batches).toHaveLength(1);
    expect(made[1]!.batches).toHaveLength(1);
  });
});
