import { Writable } from 'node:stream';
import pino from 'pino';
import { serializeError } from './logger';

class BulkWriteError extends Error {
  code = 11000;
  writeErrors = [{ err: { op: { email: 'ann@example.com', content: { text: 'secret words' } } } }];
}

describe('error serialiser', () => {
  it('keeps class, message and scalar codes but drops the documents a driver error carries', () => {
    const err = new BulkWriteError('write failed', { cause: new Error('socket closed') });
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    pino({ serializers: { err: serializeError } }, sink).error({ err }, 'append failed');
    const logged = JSON.parse(lines.join('')) as { err: Record<string, unknown> };
    expect(logged.err).toMatchObject({ type: 'BulkWriteError', message: 'write failed', code: 11000 });
    expect(logged.err.cause).toMatchObject({ type: 'Error', message: 'socket closed' });
    expect(lines.join('')).not.toContain('ann@example.com');
    expect(lines.join('')).not.toContain('secret words');
  });

  it('describes a thrown value that is not an Error', () => {
    expect(serializeError('boom')).toEqual({ message: 'boom' });
    expect(serializeError(42)).toEqual({ message: '42' });
  });
});
