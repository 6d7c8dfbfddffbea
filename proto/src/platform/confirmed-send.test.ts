import { assertConfirmed, UnconfirmedSendError } from './confirmed-send';
import { answer, routed } from '../testing/partitioned-sends';

describe('confirmed sends', () => {
  it('chooses the partitions kafkajs would (DefaultPartitioner) and accepts a send confirmed for each of them', () => {
    const { messages, partitions } = routed('t', ['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    expect(new Set(partitions).size).toBeGreaterThan(1);
    const answers = [...new Set(partitions)].map((partition) => answer('t', partition));
    expect(() => assertConfirmed([{ topic: 't', messages }], answers)).not.toThrow();
  });

  it('refuses a send whose answers leave out a partition that had messages', () => {
    const { messages, partitions } = routed('t', ['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    const [left, ...rest] = [...new Set(partitions)];
    const attempt = () =>
      assertConfirmed(
        [{ topic: 't', messages }],
        rest.map((p) => answer('t', p)),
      );
    expect(attempt).toThrow(UnconfirmedSendError);
    expect(attempt).toThrow(`t#${left}`);
  });

  it('passes messages no noting partitioner saw, and refuses answers of another topic', () => {
    const { messages, partitions } = routed('t', ['a']);
    expect(() => assertConfirmed([{ topic: 't', messages: [{ key: 'x', value: 'v' }] }], [])).not.toThrow();
    expect(() => assertConfirmed([{ topic: 't', messages }], [answer('other', partitions[0]!)])).toThrow(
      UnconfirmedSendError,
    );
  });
});
