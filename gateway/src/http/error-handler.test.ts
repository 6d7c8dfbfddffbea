import fs from 'node:fs';
import path from 'node:path';
import { STATUS, statusOf, toAppError } from './error-handler';
import { MongoNetworkError, MongoServerError, MongoTopologyClosedError } from 'mongodb';
import { NotFoundError } from '../errors';

function retryableServerError(): MongoServerError {
  const err = new MongoServerError({ message: 'not primary', code: 10107 });
  err.addErrorLabel('RetryableWriteError');
  return err;
}

describe('error translation', () => {
  it.each([
    [
      'a body over the limit',
      Object.assign(new Error('too large'), { type: 'entity.too.large', status: 413 }),
      413,
      'payload_too_large',
    ],
    [
      'a JSON syntax error from co-body',
      Object.assign(new SyntaxError('Unexpected end'), { status: 400 }),
      400,
      'invalid_json',
    ],
    [
      'an unsupported charset',
      Object.assign(new Error('x'), { type: 'encoding.unsupported', status: 415 }),
      415,
      'unsupported_media_type',
    ],
    [
      'an aborted request',
      Object.assign(new Error('x'), { type: 'request.aborted', status: 400 }),
      400,
      'invalid_json',
    ],
    [
      'a gzip body that is not gzip',
      Object.assign(new Error('incorrect header check'), { errno: -3, code: 'Z_DATA_ERROR' }),
      400,
      'invalid_json',
    ],
    [
      'a br body that is not brotli',
      Object.assign(new Error('Decompression failed'), { errno: -15, code: 'ERR__ERROR_FORMAT_PADDING_2' }),
      400,
      'invalid_json',
    ],
    [
      'a zlib error from another realm, as koa-body wraps it',
      Object.assign(new Error('{"errno":-3,"code":"Z_DATA_ERROR"}'), { name: 'object' }),
      400,
      'invalid_json',
    ],
    ['an unexpected error', new TypeError('boom'), 500, 'internal'],
    ['an AppError', new NotFoundError('nope'), 404, 'not_found'],
    ['a database network error', new MongoNetworkError('connection refused'), 503, 'unavailable'],
    ['a closed database client', new MongoTopologyClosedError(), 503, 'unavailable'],
    ['a database error labelled retryable', retryableServerError(), 503, 'unavailable'],
    ['a database error that is a bug', new MongoServerError({ message: 'bad query', code: 2 }), 500, 'internal'],
  ])('%s → %s', (_name, err, status, code) => {
    const translated = toAppError(err);
    expect([statusOf(translated), translated.code]).toEqual([status, code]);
  });

  it('does not reveal the message of an unexpected error', () => {
    expect(toAppError(new Error('secret detail')).message).toBe('internal error');
  });
});

describe('the documented error codes', () => {
  // Codes are part of the public contract: the API guide's list of them names every one with its status.
  const guide = fs.readFileSync(path.join(__dirname, '../../../docs/api.md'), 'utf8');
  const list = guide.slice(guide.indexOf('## Errors'), guide.indexOf('Bodies are strict'));

  it.each(Object.entries(STATUS))('docs/api.md lists %s with its status %i', (code, status) => {
    expect(list).toContain(`\`${code}\` (${status}`);
  });
});
