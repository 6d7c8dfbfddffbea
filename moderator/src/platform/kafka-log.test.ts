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
