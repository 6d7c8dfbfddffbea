import { KafkaJSNonRetriableError, KafkaJSProtocolError } from 'kafkajs';
import { messageRejection } from './kafka-errors';

const protocol = (type: string, retriable: boolean) =>
  new KafkaJSProtocolError({ message: 'broker answer', type, code: 0, retriable } as never);

describe('messageRejection', () => {
  it.each([
    ['MESSAGE_TOO_LARGE', 'message_too_large'],
    ['RECORD_LIST_TOO_LARGE', 'message_too_large'],
    ['INVALID_RECORD', 'invalid_record'],
  ])('names %s a rejection of the message (%s)', (type, reason) => {
    expect(messageRejection(protocol(type, false))).toBe(reason);
  });

  it('finds the rejection under a wrapping error', () => {
    // kafkajs passes `cause` at run time; its type declarations do not list the option.
    const wrapped = Object.assign(new KafkaJSNonRetriableError('send failed'), {
      cause: protocol('MESSAGE_TOO_LARGE', false),
    });
    expect(messageRejection(wrapped)).toBe('message_too_large');
  });

  it.each([
    ['TOPIC_AUTHORIZATION_FAILED', false],
    ['OUT_OF_ORDER_SEQUENCE_NUMBER', false],
    ['NOT_LEADER_FOR_PARTITION', true],
  ])('does not blame the message for %s', (type, retriable) => {
    expect(messageRejection(protocol(type, retriable))).toBeUndefined();
  });

  it('does not blame the message for a connection error or a plain error', () => {
    expect(messageRejection(new Error('connect ECONNREFUSED'))).toBeUndefined();
    expect(messageRejection(undefined)).toBeUndefined();
  });
});
