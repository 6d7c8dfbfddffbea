import * as grpc from '@grpc/grpc-js';
import { GRPC_ERROR_TRAILERS } from '@vigil/proto';
import { brokenInsertError } from '@vigil/proto/dist/testing/driver-errors';
import { MongoNetworkError } from 'mongodb';
import pino from 'pino';
import { TenantBusyError, UnavailableError } from '../domain/errors';
import { KeyedLimit } from './keyed-limit';
import { toServiceError } from './errors';

const log = pino({ level: 'silent' });

/** What a tenant's call gets from its Moderate share when one call runs and none may wait. */
async function refusedByShare(): Promise<unknown> {
  const limit = new KeyedLimit({ capacity: 1, maxWaiting: 0 });
  let finish!: () => void;
  // Admitted at once, so the task starts (and sets finish) within run.
  const running = limit.run('tenant-a', () => new Promise<void>((resolve) => (finish = resolve)));
  const refusal = await limit.run('tenant-a', () => Promise.resolve()).catch((err: unknown) => err);
  finish();
  await running;
  return refusal;
}

describe('toServiceError', () => {
  it('answers a busy tenant UNAVAILABLE with the code unavailable, which the gateway answers 503 unavailable', async () => {
    const refusal = await refusedByShare();
    expect(refusal).toBeInstanceOf(TenantBusyError);

    const status = toServiceError(refusal, log, 'Moderate');

    expect(status.code).toBe(grpc.status.UNAVAILABLE);
    expect(status.details).toBe('too many moderations waiting for this tenant');
    expect(status.metadata?.get(GRPC_ERROR_TRAILERS.code)).toEqual(['unavailable']);
    expect(status.metadata?.get(GRPC_ERROR_TRAILERS.details)).toEqual(['{"retriable":true}']);
  });

  it('keeps a busy tenant retriable, so ingest tries its command again rather than dead-lettering it', () => {
    const busy = new TenantBusyError();
    expect(busy).toBeInstanceOf(UnavailableError);
    expect(busy).toMatchObject({ code: 'unavailable', retriable: true, name: 'TenantBusyError' });
  });

  it('answers an error outside the family INTERNAL without its message', () => {
    const status = toServiceError(new Error('secret detail'), log, 'Moderate');
    expect(status).toMatchObject({ code: grpc.status.INTERNAL, details: 'internal error' });
    expect(status.metadata?.get(GRPC_ERROR_TRAILERS.code)).toEqual(['internal']);
  });

  it.each([
    ['a socket reset that escaped the driver', Object.assign(new Error('write ECONNRESET'), { code: 'ECONNRESET' })],
    ['a bulk write broken off by a reset', brokenInsertError(2, new MongoNetworkError('read ECONNRESET'))],
  ])('answers %s UNAVAILABLE, so the caller tries again', (_name, err) => {
    const status = toServiceError(err, log, 'Moderate');
    expect(status.code).toBe(grpc.status.UNAVAILABLE);
    expect(status.metadata?.get(GRPC_ERROR_TRAILERS.code)).toEqual(['unavailable']);
  });
});
