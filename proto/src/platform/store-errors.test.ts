import { MongoNetworkError, MongoServerError, MongoServerSelectionError, MongoTopologyClosedError } from 'mongodb';
import { isStoreUnavailable, isUnavailableServerError } from './store-errors';
import { brokenInsertError } from '../testing/driver-errors';

const serverError = (code: number, message: string, labels: string[] = []) =>
  Object.assign(new Error(message), { code, hasErrorLabel: (label: string) => labels.includes(label) });

describe('isUnavailableServerError', () => {
  it.each([
    [
      'FerretDB with PostgreSQL refusing connections',
      serverError(1, 'failed to connect to `user=postgres`: connection refused'),
    ],
    [
      'PostgreSQL shutting down',
      serverError(1, 'FATAL: terminating connection due to administrator command (SQLSTATE 57P01)'),
    ],
    ['PostgreSQL starting up', serverError(1, 'FATAL: the database system is starting up (SQLSTATE 57P03)')],
    ['PostgreSQL out of connection slots', serverError(1, 'FATAL: sorry, too many clients already (SQLSTATE 53300)')],
    [
      'a transaction that lost to a concurrent one',
      serverError(1, 'ERROR: could not serialize access due to concurrent update (SQLSTATE 40001)'),
    ],
    ['a deadlock', serverError(1, 'ERROR: deadlock detected (SQLSTATE 40P01)')],
    ['a write the driver labels retryable', serverError(11000, 'E11000', ['RetryableWriteError'])],
    ['a primary stepping down', serverError(189, 'PrimarySteppedDown')],
  ])('%s: unavailable', (_name, err) => {
    expect(isUnavailableServerError(err)).toBe(true);
  });

  it.each([
    ['a duplicate key', serverError(11000, 'E11000 duplicate key error')],
    ['an unknown operator', serverError(2, 'unknown operator: $foo')],
    ['a document too large', serverError(10334, 'BSONObj size: 17000000 is invalid')],
    ['a PostgreSQL refusal of the statement', serverError(1, 'ERROR: value too long for type (SQLSTATE 22001)')],
    ['not an error object', 'connection refused'],
    ['null', null],
  ])('%s: not unavailable', (_name, err) => {
    expect(isUnavailableServerError(err)).toBe(false);
  });
});

describe('isStoreUnavailable', () => {
  const socketError = (code: string) => Object.assign(new Error(`read ${code}`), { code });

  it.each([
    ['a socket reset that reached the caller unwrapped', socketError('ECONNRESET')],
    ['a refused connection, unwrapped', socketError('ECONNREFUSED')],
    ['a network error of the driver', new MongoNetworkError('connection 3 to 127.0.0.1:27017 closed')],
    [
      'no server selected',
      new MongoServerSelectionError('Server selection timed out after 5000 ms', { error: undefined } as never),
    ],
    ['a closed topology', new MongoTopologyClosedError()],
    [
      'FerretDB with PostgreSQL out of reach',
      new MongoServerError({ code: 1, errmsg: 'failed to connect to `user=postgres`: connection refused' }),
    ],
    ['a bulk write broken off by a client-side error', brokenInsertError(3, new MongoNetworkError('connection reset'))],
  ])('is true of %s', (_name, err) => {
    expect(isStoreUnavailable(err)).toBe(true);
  });

  it.each([
    ['a duplicate key', new MongoServerError({ code: 11000, errmsg: 'E11000 duplicate key error' })],
    ['a document the server refuses', new MongoServerError({ code: 2, errmsg: 'invalid document' })],
    ['an error of the caller', new TypeError('cannot read properties of undefined')],
    ['an error with another code', socketError('ENOENT')],
    ['a value that is not an error', 'ECONNRESET'],
  ])('is false of %s', (_name, err) => {
    expect(isStoreUnavailable(err)).toBe(false);
  });
});
