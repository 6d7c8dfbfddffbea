import { MongoNetworkError, MongoServerError } from 'mongodb';
import { AppError, StoreFailedError, UnavailableError } from '../errors';
import { fromStore, isRetriable } from './store-errors';

function retryableWrite(): MongoServerError {
  const err = new MongoServerError({ message: 'not primary', code: 10107 });
  err.addErrorLabel('RetryableWriteError');
  return err;
}

describe('fromStore', () => {
  it.each([
    ['a network error', new MongoNetworkError('connection reset'), UnavailableError, true],
    ['a write the driver labels retryable', retryableWrite(), UnavailableError, true],
    ['a duplicate key', new MongoServerError({ message: 'E11000', code: 11000 }), StoreFailedError, false],
  ])('maps %s to %p (retriable %p)', (_name, err, type, retriable) => {
    const failure = fromStore(err);
    expect(failure).toBeInstanceOf(type);
    expect((failure as AppError).retriable).toBe(retriable);
    expect((failure as AppError).cause).toBe(err);
  });

  it('returns an error that is not the driver’s as it is', () => {
    const err = new TypeError('bug');
    expect(fromStore(err)).toBe(err);
  });
});

describe('isRetriable', () => {
  it.each([
    ['the store out of reach', new MongoNetworkError('connection reset'), true],
    ['a write the store refused', new MongoServerError({ message: 'SQLSTATE 22P05', code: 1 }), false],
    ['an error that is not the driver’s', new TypeError('bug'), false],
    ['the store out of reach, wrapped', new Error('insert failed', { cause: new MongoNetworkError('reset') }), true],
  ])('tells %s: %p', (_name, err, retriable) => {
    expect(isRetriable(err)).toBe(retriable);
  });
});
