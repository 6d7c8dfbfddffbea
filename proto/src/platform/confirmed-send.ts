import { Partitioners, type ICustomPartitioner, type Message, type RecordMetadata } from 'kafkajs';

const PARTITION = Symbol('partition');
type Noted = Message & { [PARTITION]?: number };

/**
 * kafkajs's DefaultPartitioner (the same choice, so keys keep their partitions), noting on each message the partition
 * it chose, for `assertConfirmed`.
 */
export const notingPartitioner: ICustomPartitioner = () => {
  const choose = Partitioners.DefaultPartitioner();
  return (args) => {
    const partition = choose(args);
    (args.message as Noted)[PARTITION] = partition;
    return partition;
  };
};

/** A send that kafkajs reported as done although the broker confirmed none of some partition's messages. */
export class UnconfirmedSendError extends Error {
  readonly retriable = true;

  constructor(readonly partitions: string[]) {
    super(`kafka confirmed no write to ${partitions.join(', ')}`);
    this.name = 'UnconfirmedSendError';
  }
}

/**
 * Throws UnconfirmedSendError unless every message's partition (as `notingPartitioner` chose it) is in the broker's
 * answers; a message no noting partitioner saw (a producer made without it) cannot be checked and is passed. kafkajs 2.2 keeps, across the retries of one send, the answers of the brokers that answered: when a
 * partition's leader dies and the partition moves to a broker that already answered for its other partitions, the
 * retry sends nothing for it and the send resolves, its messages never written (seen under a broker SIGKILL). A send
 * that throws this is sent again, through a new producer (duplicates are dropped downstream by id).
 */
export function assertConfirmed(
  topicMessages: ReadonlyArray<{ topic: string; messages: Message[] }>,
  results: RecordMetadata[],
): void {
  const confirmed = new Set(results.map((result) => `${result.topicName}#${result.partition}`));
  const missing = new Set<string>();
  for (const { topic, messages } of topicMessages) {
    for (const message of messages) {
      const partition = (message as Noted)[PARTITION];
      if (partition !== undefined && !confirmed.has(`${topic}#${partition}`)) missing.add(`${topic}#${partition}`);
    }
  }
  if (missing.size > 0) throw new UnconfirmedSendError([...missing]);
}
