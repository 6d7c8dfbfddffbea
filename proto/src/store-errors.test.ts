import { isUnavailableServerError } from './store-errors';

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
    ['a write the driver labels retryable', serverError(11000, 'E11000', ['RetryableWriteError'])],
    ['a primary stepping down', serverError(189, 'PrimarySteppedDown')],
  ])('%s: unavailable', (_name, err) => {
    expect(isUnavailableServerError(err)).toBe(true);
  });

  it.each([
    ['a duplicate key', serverError(11000, 'E11000 duplicate key error')],
    ['an unknown operator', serverError(2, 'unknown operator: $foo')],
    ['a document too large', serverError(10334, 'BSONObj size: 17000000 is invalid')],
    ['not an error object', 'connection refused'],
    ['null', null],
  ])('%s: not unavailable', (_name, err) => {
    expect(isUnavailableServerError(err)).toBe(false);
  });
});
