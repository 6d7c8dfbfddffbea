import pino from 'pino';
import { waitFor } from '../../../deploy/test-support';
import { OffsetCommits } from './offset-commits';

type Commit = { topic: string; partition: number; offset: string }[];

/** Records each commit request; `fail` makes the next one reject. */
function recordingConsumer() {
  const requests: Commit[] = [];
  let fail = false;
  return {
    requests,
    failNext: () => (fail = true),
    consumer: {
      commitOffsets: (offsets: Commit) => {
        if (fail) {
          fail = false;
          return Promise.reject(new Error('REBALANCE_IN_PROGRESS'));
        }
        requests.push(offsets);
        return Promise.resolve();
      },
    },
  };
}

const log = pino({ level: 'silent' });

describe('offset commits gathered per interval', () => {
  it('commits each batch at once with an interval of 0', async () => {
    const { requests, consumer } = recordingConsumer();
    const commits = new OffsetCommits(consumer, 0, log);
    await commits.handled('ingest', 0, '5');
    await commits.handled('ingest', 0, '9');
    expect(requests).toEqual([
      [{ topic: 'ingest', partition: 0, offset: '5' }],
      [{ topic: 'ingest', partition: 0, offset: '9' }],
    ]);
  });

  it('sends one request with the latest offset of every partition handled within the interval', async () => {
    const { requests, consumer } = recordingConsumer();
    const commits = new OffsetCommits(consumer, 60_000, log);
    await commits.handled('ingest', 0, '5');
    await commits.handled('ingest', 1, '3');
    await commits.handled('ingest', 0, '12');
    // A late, lower offset (batches of one partition finish in order, but a redelivery may not) never moves it back.
    await commits.handled('ingest', 0, '7');
    expect(requests).toHaveLength(0);
    await commits.flush();
    expect(requests).toEqual([
      [
        { topic: 'ingest', partition: 0, offset: '12' },
        { topic: 'ingest', partition: 1, offset: '3' },
      ],
    ]);
    await commits.flush();
    expect(requests).toHaveLength(1);
  });

  it('commits on its own once the interval has passed', async () => {
    const { requests, consumer } = recordingConsumer();
    const commits = new OffsetCommits(consumer, 20, log);
    await commits.handled('events', 2, '40');
    await waitFor(() => requests.length > 0, { timeoutMs: 10_000, intervalMs: 10, what: 'the timed commit' });
    expect(requests).toEqual([[{ topic: 'events', partition: 2, offset: '40' }]]);
  });

  it('logs a failed commit and goes on: the next one carries newer offsets', async () => {
    const { requests, consumer, failNext } = recordingConsumer();
    const commits = new OffsetCommits(consumer, 60_000, log);
    await commits.handled('ingest', 0, '5');
    failNext();
    await commits.flush();
    await commits.handled('ingest', 0, '8');
    await commits.flush();
    expect(requests).toEqual([[{ topic: 'ingest', partition: 0, offset: '8' }]]);
  });

  it('on close commits what is noted, and each later batch at once', async () => {
    const { requests, consumer } = recordingConsumer();
    const commits = new OffsetCommits(consumer, 60_000, log);
    await commits.handled('ingest', 0, '5');
    await commits.close();
    expect(requests).toEqual([[{ topic: 'ingest', partition: 0, offset: '5' }]]);
    await commits.handled('ingest', 0, '6');
    expect(requests).toHaveLength(2);
  });
});

/** A promise settled from outside: the work a batch handed over. */
function work() {
  let done!: () => void;
  let fail!: (err: Error) => void;
  const written = new Promise<void>((resolve, reject) => {
    done = resolve;
    fail = reject;
  });
  return { written, done, fail };
}

describe('offset commits of batches whose work goes on after them', () => {
  it('notes a batch only once its work is done, and never a later batch of the partition before an earlier one', async () => {
    const { requests, consumer } = recordingConsumer();
    const commits = new OffsetCommits(consumer, 0, log);
    const first = work();
    const second = work();
    // Each returns at once: the handler does not wait for the work.
    await commits.handled('events', 0, '5', first.written);
    await commits.handled('events', 0, '9', second.written);
    // A batch without work of its own waits behind them too; another partition does not.
    await commits.handled('events', 0, '12');
    await commits.handled('events', 1, '3');
    expect(requests).toEqual([[{ topic: 'events', partition: 1, offset: '3' }]]);
    second.done();
    await new Promise((resolve) => setImmediate(resolve));
    expect(requests).toHaveLength(1);
    first.done();
    await waitFor(() => requests.length === 4, { timeoutMs: 5_000, intervalMs: 5, what: 'the commits in order' });
    expect(requests.slice(1)).toEqual([
      [{ topic: 'events', partition: 0, offset: '5' }],
      [{ topic: 'events', partition: 0, offset: '9' }],
      [{ topic: 'events', partition: 0, offset: '12' }],
    ]);
  });

  it('with an interval, notes them in order for the gathered commit', async () => {
    const { requests, consumer } = recordingConsumer();
    const commits = new OffsetCommits(consumer, 60_000, log);
    const first = work();
    await commits.handled('events', 0, '5', first.written);
    await commits.handled('events', 0, '9');
    await commits.flush();
    expect(requests).toEqual([]);
    first.done();
    await new Promise((resolve) => setImmediate(resolve));
    await commits.flush();
    expect(requests).toEqual([[{ topic: 'events', partition: 0, offset: '9' }]]);
  });

  it("notes nothing more of a partition once a batch's work failed for good: its messages are read again", async () => {
    const { requests, consumer } = recordingConsumer();
    const commits = new OffsetCommits(consumer, 0, log);
    const first = work();
    await commits.handled('events', 0, '5', first.written);
    await commits.handled('events', 0, '9', Promise.resolve());
    // Failed already while an earlier batch waits: not an unhandled rejection.
    await commits.handled('events', 0, '10', Promise.reject(new Error('not written')));
    await new Promise((resolve) => setImmediate(resolve));
    first.fail(new Error('not written'));
    await commits.close();
    await commits.handled('events', 0, '12');
    await commits.handled('events', 1, '4');
    expect(requests).toEqual([[{ topic: 'events', partition: 1, offset: '4' }]]);
  });

  it('on close waits for the work handed over, and a batch handled while closing returns once committed', async () => {
    const { requests, consumer } = recordingConsumer();
    const commits = new OffsetCommits(consumer, 60_000, log);
    const first = work();
    await commits.handled('events', 0, '5', first.written);
    const closed = commits.close();
    const late = work();
    const lateHandled = commits.handled('events', 2, '7', late.written);
    await new Promise((resolve) => setImmediate(resolve));
    expect(requests).toEqual([]);
    first.done();
    await closed;
    expect(requests).toEqual([[{ topic: 'events', partition: 0, offset: '5' }]]);
    late.done();
    await lateHandled;
    expect(requests[1]).toEqual([{ topic: 'events', partition: 2, offset: '7' }]);
  });
});
