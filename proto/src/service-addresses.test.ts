import { BrokerList, GrpcTarget } from './service-addresses';

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

describe('GrpcTarget (MODERATOR_ADDRESS)', () => {
  it.each([
    '127.0.0.1:50051',
    'vigil-moderator:50051',
    'dns:///vigil-moderator-headless.moderation.svc.cluster.local:50051',
    'dns://10.0.0.10:53/vigil-moderator-headless:50051',
    'dns:vigil-moderator:50051',
    '[::1]:50051',
    'ipv4:127.0.0.1:50051,127.0.0.1:50151',
    'ipv6:[::1]:50051',
  ])('accepts %j', (value) => {
    expect(GrpcTarget.safeParse(value).success).toBe(true);
  });

  it.each([
    ['a version number', '3.9.1'],
    ['a name without port (gRPC would dial 443)', 'vigil-moderator'],
    ['dns without port', 'dns:///vigil-moderator-headless'],
    ['port 0', '127.0.0.1:0'],
    ['an http URL', 'http://vigil-moderator:50051'],
    ['nothing', ''],
    ['an address list with one entry without port', 'ipv4:127.0.0.1:50051,127.0.0.1'],
    ['an empty address list', 'ipv4:'],
  ])('refuses %s (%j)', (_name, value) => {
    expect(GrpcTarget.safeParse(value).success).toBe(false);
  });
});
