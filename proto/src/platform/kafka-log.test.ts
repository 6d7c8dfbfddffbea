import { Writable } from 'node:stream';
import { logLevel } from 'kafkajs';
import pino from 'pino';
import { kafkaLogCreator, kafkaLogLevel } from './kafka-log';

function capture(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino({ level }, sink), lines };
}

const entry = (level: logLevel, extra: Record<string, unknown> = {}) => ({
  namespace: 'Connection',
  level,
  label: 'ERROR',
  log: { timestamp: '2026-01-01T00:00:00.000Z', message: 'Connection error', ...extra },
});

describe('kafkaLogCreator', () => {
  it.each([
    [logLevel.ERROR, 50],
    [logLevel.WARN, 40],
    [logLevel.INFO, 30],
    [logLevel.DEBUG, 20],
  ])('writes kafkajs level %s at pino level %s', (kafkaLevel, pinoLevel) => {
    const { log, lines } = capture('debug');
    kafkaLogCreator(log)(logLevel.DEBUG)(entry(kafkaLevel));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: pinoLevel, msg: 'Connection error', component: 'kafkajs' });
  });

  it('keeps where and what, and drops everything else (buffers, payloads, stacks)', () => {
    const { log, lines } = capture('debug');
    kafkaLogCreator(log)(logLevel.DEBUG)(
      entry(logLevel.ERROR, {
        broker: 'kafka-0:9092',
        clientId: 'vigil-moderator',
        topic: 'vigil.ingest',
        partition: 2,
        error: 'connect ECONNREFUSED',
        stack: 'Error: connect ECONNREFUSED\n    at …',
        payload: { value: 'user content' },
        value: 'user content',
      }),
    );
    expect(lines[0]).toMatchObject({
      namespace: 'Connection',
      broker: 'kafka-0:9092',
      clientId: 'vigil-moderator',
      topic: 'vigil.ingest',
      partition: 2,
      error: 'connect ECONNREFUSED',
    });
    expect(JSON.stringify(lines[0])).not.toContain('user content');
    expect(lines[0]).not.toHaveProperty('stack');
  });
});

describe('kafkaLogCreator during a rebalance', () => {
  // Entries as kafkajs 2.2.4 writes them when a member joins or leaves the group (connection.js, runner.js).
  it.each([
    [
      'Connection',
      logLevel.ERROR,
      'Response Heartbeat(key: 12, version: 3)',
      'The group is rebalancing, so a rejoin is needed',
      30,
    ],
    [
      'Connection',
      logLevel.ERROR,
      'Response OffsetCommit(key: 8, version: 5)',
      'Specified group generation id is not valid',
      30,
    ],
    [
      'Connection',
      logLevel.ERROR,
      'Response JoinGroup(key: 11, version: 5)',
      'The group member needs to have a valid member id before actually entering a consumer group',
      30,
    ],
    [
      'Connection',
      logLevel.ERROR,
      'Response Heartbeat(key: 12, version: 3)',
      'The coordinator is not aware of this member',
      40,
    ],
    [
      'Connection',
      logLevel.ERROR,
      'Response SyncGroup(key: 14, version: 3)',
      'This is not the correct coordinator for this group',
      40,
    ],
    [
      'Connection',
      logLevel.ERROR,
      'Response Fetch(key: 1, version: 11)',
      'This server is not the leader for that topic-partition',
      40,
    ],
    [
      'Runner',
      logLevel.WARN,
      'The group is rebalancing, re-joining',
      'The group is rebalancing, so a rejoin is needed',
      30,
    ],
    ['Runner', logLevel.ERROR, 'The coordinator is not aware of this member, re-joining the group', undefined, 40],
  ])('writes %s %s "%s" (%s) at pino level %s', (namespace, kafkaLevel, message, error, pinoLevel) => {
    const { log, lines } = capture('debug');
    kafkaLogCreator(log)(logLevel.DEBUG)({
      namespace,
      level: kafkaLevel,
      label: 'ERROR',
      log: { timestamp: '2026-01-01T00:00:00.000Z', message, ...(error === undefined ? {} : { error }) },
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: pinoLevel, msg: message });
  });

  it('keeps errors that are not part of a rebalance at error level', () => {
    const { log, lines } = capture('debug');
    kafkaLogCreator(log)(logLevel.DEBUG)(
      entry(logLevel.ERROR, { message: 'Response Produce(key: 0, version: 7)', error: 'The request timed out' }),
    );
    kafkaLogCreator(log)(logLevel.DEBUG)(entry(logLevel.ERROR, { message: 'Crash: KafkaJSNumberOfRetriesExceeded' }));
    expect(lines.map((line) => line.level)).toEqual([50, 50]);
  });

  it('never raises a level: a routine error logged at debug stays at debug', () => {
    const { log, lines } = capture('debug');
    kafkaLogCreator(log)(logLevel.DEBUG)(
      entry(logLevel.DEBUG, { error: 'The group is rebalancing, so a rejoin is needed' }),
    );
    expect(lines[0]).toMatchObject({ level: 20 });
  });

  it('drops a lowered entry below the logger level', () => {
    const { log, lines } = capture('warn');
    kafkaLogCreator(log)(logLevel.WARN)(
      entry(logLevel.ERROR, { error: 'The group is rebalancing, so a rejoin is needed' }),
    );
    expect(lines).toHaveLength(0);
  });
});

describe('kafkaLogLevel', () => {
  it.each([
    ['debug', logLevel.DEBUG],
    ['info', logLevel.INFO],
    ['warn', logLevel.WARN],
    ['error', logLevel.ERROR],
    ['silent', logLevel.NOTHING],
  ])('asks kafkajs for what pino level %s prints', (level, expected) => {
    expect(kafkaLogLevel(capture(level).log)).toBe(expected);
  });
});
