import { notingPartitioner, UnconfirmedSendError } from '@vigil/proto/platform';
import { answer, partitionMetadata, routed } from '@vigil/proto/dist/testing/partitioned-sends';
import type { Producer, ProducerRecord } from 'kafkajs';
import { ConfirmedProducer } from './confirmed-producer';

/**
 * A kafkajs producer as far as ConfirmedProducer uses it: routes each message with a noting partitioner, as kafkajs
 * does, and answers for every partition but the ones in `drop` (or throws `fail` once).
 */
function fakeProducers() {
  const made: Array<{ sends: number; connected: boolean }> = [];
  const behaviour: { drop: Set<number>; fail?: Error } = { drop: new Set() };
  const create = (): Producer => {
    const state = { sends: 0, connected: false };
    made.push(state);
    const partitioner = notingPartitioner();
    return {
      connect: () => {
        state.connected = true;
        return Promise.resolve();
      },
      disconnect: () => {
        state.connected = false;
        return Promise.resolve();
      },
      send: (record: ProducerRecord) => {
        state.sends += 1;
        if (behaviour.fail) {
          const err = behaviour.fail;
          behaviour.fail = undefined;
          return Promise.reject(err);
        }
        const partitions = new Set(
          record.messages.map((message) => partitioner({ topic: record.topic, partitionMetadata, message })),
        );
        return Promise.resolve(
          [...partitions].filter((partition) => !behaviour.drop.has(partition)).map((p) => answer(record.topic, p)),
        );
      },
    } as unknown as Producer;
  };
  return { made, behaviour, create };
}

describe('ConfirmedProducer', () => {
  const record = (keys: string[]) => ({ topic: 't', messages: keys.map((key) => ({ key, value: 'v' })) });

  it('keeps one producer while its sends are confirmed', async () => {
    const { made, create } = fakeProducers();
    const producer = new ConfirmedProducer(create);
    await producer.send(record(['a', 'b']));
    await producer.send(record(['c']));
    expect(made).toEqual([{ sends: 2, connected: true }]);
  });

  it('throws for a send the broker did not confirm, and sends the next through a new producer', async () => {
    const { made, behaviour, create } = fakeProducers();
    const producer = new ConfirmedProducer(create);
    const { partitions } = routed('t', ['a']);
    behaviour.drop.add(partitions[0]!);
    await expect(producer.send(record(['a']))).rejects.toThrow(UnconfirmedSendError);
    behaviour.drop.clear();
    await producer.send(record(['a']));
    expect(made).toEqual([
      { sends: 1, connected: false },
      { sends: 1, connected: true },
    ]);
  });

  it('replaces its producer after a send that failed', async () => {
    const { made, behaviour, create } = fakeProducers();
    const producer = new ConfirmedProducer(create);
    behaviour.fail = new Error('broker gone');
    await expect(producer.send(record(['a']))).rejects.toThrow('broker gone');
    await producer.send(record(['a']));
    expect(made.map((state) => state.connected)).toEqual([false, true]);
    await producer.disconnect();
    expect(made.map((state) => state.connected)).toEqual([false, false]);
  });
});

describe('ConfirmedProducer, concurrent sends', () => {
  it('sends one at a time: a second send starts only once the first settled', async () => {
    let inFlight = 0;
    let most = 0;
    const answers: Array<() => void> = [];
    const producer = new ConfirmedProducer(
      () =>
        ({
          connect: () => Promise.resolve(),
          disconnect: () => Promise.resolve(),
          send: () => {
            inFlight += 1;
            most = Math.max(most, inFlight);
            return new Promise((resolve) =>
              answers.push(() => {
                inFlight -= 1;
                resolve([]);
              }),
            );
          },
        }) as unknown as Producer,
    );
    const sends = [1, 2, 3].map(() => producer.send({ topic: 't', messages: [{ value: 'v' }] }));
    for (let answered = 0; answered < 3; answered += 1) {
      await waitUntil(() => answers.length > 0);
      answers.shift()!();
    }
    await Promise.all(sends);
    expect(most).toBe(1);
  });
});

async function waitUntil(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}
