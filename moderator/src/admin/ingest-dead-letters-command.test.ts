import { UsageError } from './dead-letters-command';
import { parseDeadLetterId } from './ingest-dead-letters-command';

const TOPIC = 'p.vigil.ingest.dlq.v1';

describe('parseDeadLetterId', () => {
  it('reads the coordinates of a dead letter of the topic', () => {
    expect(parseDeadLetterId(`${TOPIC}/2/12345678901234`, TOPIC)).toEqual({
      topic: TOPIC,
      partition: 2,
      offset: 12345678901234n,
    });
  });

  it.each([
    ['no offset', `${TOPIC}/2`, /^malformed dead letter id/],
    ['a negative offset', `${TOPIC}/2/-1`, /^malformed dead letter id/],
    ['an offset that is no number', `${TOPIC}/2/x`, /^malformed dead letter id/],
    ['an offset past a 64-bit offset', `${TOPIC}/2/1234567890123456789012`, /^malformed dead letter id/],
    ['the ingest topic', 'p.vigil.ingest.v1/2/3', /is not in the ingest dead-letter topic p\.vigil\.ingest\.dlq\.v1$/],
    ['an empty id', '', /^malformed dead letter id ""/],
  ])('refuses %s', (_name, id, message) => {
    expect(() => parseDeadLetterId(id, TOPIC)).toThrow(UsageError);
    expect(() => parseDeadLetterId(id, TOPIC)).toThrow(message);
  });

  it('shows at most 200 characters of what it refuses', () => {
    expect(() => parseDeadLetterId('x'.repeat(5000), TOPIC)).toThrow(`"${'x'.repeat(200)}…"`);
  });
});
