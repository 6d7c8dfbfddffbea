import { BrokerList } from './service-addresses';

describe('BrokerList (KAFKA_BROKERS)', () => {
  it.each([
    ['localhost:9092', ['localhost:9092']],
    ['127.0.0.1:33241', ['127.0.0.1:33241']],
    [' kafka-0.kafka:9092, kafka-1.kafka:9092 ', ['kafka-0.kafka:9092', 'kafka-1.kafka:9092']],
    ['kafka_broker:1,b:65535,', ['kafka_broker:1', 'b:65535']],
  ])('reads %j as %j', (value, expected) => {
    expect(BrokerList.parse(value)).toEqual(expected);
  });

  it.each([
    ['a version number', '3.9.1'],
    ['a host without port', 'kafka-0'],
    ['one good and one bad entry', 'kafka-0:9092,kafka-1'],
    ['port 0', 'kafka:0'],
    ['port 65536', 'kafka:65536'],
    ['a port that is not a number', 'kafka:http'],
    ['an empty port', 'kafka:'],
    ['an empty host', ':9092'],
    ['a URL', 'PLAINTEXT://kafka:9092'],
    ['an IPv6 literal (kafkajs splits at the first colon)', '[::1]:9092'],
    ['spaces inside an entry', 'kafka 0:9092'],
    ['a host ending in a dot', 'kafka.:9092'],
    ['nothing', ''],
    ['only commas', ' , '],
  ])('refuses %s (%j)', (_name, value) => {
    expect(BrokerList.safeParse(value).success).toBe(false);
  });

  it('names the bad entry in the message', () => {
    const parsed = BrokerList.safeParse('kafka-0:9092,3.9.1');
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((issue) => issue.message).join('\n')).toContain('"3.9.1"');
  });
});
