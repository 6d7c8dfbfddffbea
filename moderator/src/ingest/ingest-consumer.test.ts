import { HEADERS, topicNames } from '@vigil/proto';
import type { IHeaders, KafkaMessage, Producer, ProducerRecord } from 'kafkajs';
import pino from 'pino';
import { fakeKafka } from '../../../deploy/test-support/fake-kafka-consumer';
import { ConflictError } from '../domain/errors';
import { Gathering, WriteGroups } from '@vigil/proto/platform';
import { IngestConsumer, type Verdict } from './ingest-consumer';
import { ingestCommand } from './testing/commands';

const topics = topicNames('t.');

/**
 * A consumer whose handler is in memory: it answers `verdicts` in turn (`done` after them), throwing the errors among
 * them; `room` answers the back-pressure asks in turn (true after them).
 */
function setup(
  options: {
    verdicts?: (Verdict | Error)[];
    room?: boolean[];
    maxUnexpectedAttempts?: number;
    gatherMs?: number;
    gathering?: Gathering;
    /** Replaces the in-memory verdicts. */
    handle?: (message: KafkaMessage) => Promise<Verdict>;
  } = {},
) {
  const { kafka, deliver, committed } = fakeKafka(topics.ingest);
  const verdicts = [...(options.verdicts ?? [])];
  const handled: string[] = [];
  const room = [...(options.room ?? [])];
  let roomAsks = 0;
  const deadLetters: ProducerRecord[] = [];
  const producer = {
    send: (record: ProducerRecord) => {
      deadLetters.push(record);
      return Promise.resolve([]);
    },
  } as unknown as Producer;
  const outcomes: string[] = [];
  const consumer = new IngestConsumer({
    kafka,
    groupId: 'moderator',
    timing: { sessionTimeoutMs: 600_000, heartbeatIntervalMs: 60_000, rebalanceTimeoutMs: 600_000 },
    topics,
    handler: {
      handle: (message) => {
        if (options.handle) return options.handle(message);
        const next = verdicts.shift() ?? { kind: 'done' };
        if (next instanceof Error) return Promise.reject(next);
        handled.push(message.offset);
        return Promise.resolve(next);
      },
    },
    backpressure: {
      room: () => {
        roomAsks += 1;
        return Promise.resolve(room.shift() ?? true);
      },
    },
    producer,
    log: pino({ level: 'silent' }),
    concurrency: 1,
    retryInitialMs: 1,
    retryMaxMs: 2,
    maxUnexpectedAttempts: options.maxUnexpectedAttempts ?? 3,
    onOutcome: (outcome) => outcomes.push(outcome),
    gatherMs: options.gatherMs ?? 0,
    gathering: options.gathering,
  });
  const reasons = () =>
    deadLetters.flatMap((record) =>
      record.messages.map((m) => String((m.headers as IHeaders)[HEADERS.deadLetterReason])),
    );
  return { consumer, deliver, committed, handled, deadLetters, reasons, outcomes, roomAsks: () => roomAsks };
}

function message(value: unknown, offset = '0', headers: IHeaders = {}, key = 'ten_1/post-1'): KafkaMessage {
  return {
    key: Buffer.from(key),
    value: Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)),
    offset,
    headers,
    timestamp: '0',
    attributes: 0,
  };
}

describe('IngestConsumer', () => {
  it('holds a batch done sooner than INGEST_GATHER_MS until it is over, after committing it', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      const t = setup({ gatherMs: 15 });
      await t.consumer.start();
      let done = false;
      const delivered = t.deliver([message(ingestCommand(), '41')]).then(() => (done = true));
      await jest.advanceTimersByTimeAsync(14);
      expect(t.committed).toEqual([{ topic: topics.ingest, partition: 0, offset: '42' }]);
      expect(done).toBe(false);
      await jest.advanceTimersByTimeAsync(1);
      await delivered;
      expect(done).toBe(true);
    } finally {
      jest.useRealTimers();
    }
  });

  it('runs the commands of a batch as writers of its Gathering, so that they share one group write', async () => {
    const gathering = new Gathering(60_000);
    const groups: string[][] = [];
    const writes = new WriteGroups<string, boolean>(
      (items) => {
        groups.push([...items]);
        return Promise.resolve(items.map(() => true));
      },
      64,
      gathering,
    );
    // Each command is judged until the test lets it go, then writes: they finish one after another.
    const gates = new Map<string, () => void>();
    const t = setup({
      gathering,
      handle: async (m) => {
        await new Promise<void>((resolve) => gates.set(m.offset, resolve));
        await writes.write(m.offset);
        return { kind: 'done' };
      },
    });
    await t.consumer.start();
    const delivered = t.deliver(
      ['1', '2', '3'].map((offset) => message(ingestCommand(), offset, {}, `ten_1/post-${offset}`)),
    );
    const deadline = Date.now() + 5000;
    while (gates.size < 3 && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
    for (const offset of ['1', '2', '3']) {
      gates.get(offset)?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await delivered;
    expect(groups).toEqual([['1', '2', '3']]);
    expect(t.committed).toEqual([{ topic: topics.ingest, partition: 0, offset: '4' }]);
  });

  it('hands a command to the handler and commits after it', async () => {
    const t = setup();
    await t.consumer.start();
    await t.deliver([message(ingestCommand(), '41')]);
    expect(t.handled).toEqual(['41']);
    expect(t.outcomes).toEqual(['applied']);
    expect(t.deadLetters).toHaveLength(0);
    expect(t.committed).toEqual([{ topic: topics.ingest, partition: 0, offset: '42' }]);
  });

  it('sends a command the handler sets aside to the dead-letter topic with its reason, and moves on', async () => {
    const t = setup({ verdicts: [{ kind: 'dead', reason: 'invalid_command: data.clientId' }] });
    await t.consumer.start();
    await t.deliver([message(ingestCommand(), '7')]);
    expect(t.reasons()).toEqual(['invalid_command: data.clientId']);
    expect(t.deadLetters[0]?.topic).toBe(topics.ingestDeadLetter);
    expect(t.deadLetters[0]?.messages[0]?.headers).toMatchObject({
      [HEADERS.deadLetterSource]: `${topics.ingest}/0/7`,
    });
    expect(t.outcomes).toEqual(['dead_letter']);
    expect(t.committed).toEqual([{ topic: topics.ingest, partition: 0, offset: '8' }]);
  });

  it('retries a command that lost to concurrent writers (conflict) until it applies, never dead-lettering it', async () => {
    const t = setup({ verdicts: [new ConflictError('busy'), new ConflictError('busy'), new ConflictError('busy')] });
    await t.consumer.start();
    await t.deliver([message(ingestCommand(), '5')]);
    expect(t.outcomes).toEqual(['retry', 'retry', 'retry', 'applied']);
    expect(t.deadLetters).toHaveLength(0);
    expect(t.committed).toEqual([{ topic: topics.ingest, partition: 0, offset: '6' }]);
  });

  it('dead-letters a command that keeps failing for an unknown reason while the store answers', async () => {
    const t = setup({ verdicts: [new Error('odd'), new Error('odd')], maxUnexpectedAttempts: 2 });
    await t.consumer.start();
    await t.deliver([message(ingestCommand(), '9')]);
    expect(t.reasons()).toEqual(['unexpected_error']);
    expect(t.outcomes).toEqual(['retry', 'dead_letter']);
    expect(t.committed).toEqual([{ topic: topics.ingest, partition: 0, offset: '10' }]);
  });

  it('waits for room (back-pressure) before handing on a command, asking again while there is none', async () => {
    const t = setup({ room: [false, false] });
    await t.consumer.start();
    await t.deliver([message(ingestCommand(), '3')]);
    expect(t.roomAsks()).toBe(3);
    expect(t.handled).toEqual(['3']);
  });
});
