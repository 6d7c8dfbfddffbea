import { COLLECTIONS, HEADERS, recordIdFor } from '@vigil/proto';
import { MongoServerError } from 'mongodb';
import { waitFor } from '../../../deploy/test-support';
import { createEngine, type ModerationEngine } from '../../src/engine';
import { UnavailableError } from '../../src/domain/errors';
import { toAppError } from '../../src/store/mongo-errors';
import { ingestCommand, startHarness, type Harness } from './harness';

/** What FerretDB answers while its PostgreSQL is down: InternalError, no label, the backend's words in the message. */
const ferretBackendDown = () =>
  new MongoServerError({
    ok: 0,
    code: 1,
    codeName: 'InternalError',
    errmsg:
      '[msg_find.go:344 handler.handleMaxTimeMSError] failed to connect to `user=postgres database=ferretdb`: ' +
      '127.0.0.1:46157 (127.0.0.1): dial error: dial tcp 127.0.0.1:46157: connect: connection refused',
  });

describe('store errors', () => {
  it("counts FerretDB's backend being down as the database unavailable, and a refusal as not", () => {
    expect(toAppError(ferretBackendDown())).toBeInstanceOf(UnavailableError);
    const refused = new MongoServerError({ ok: 0, code: 2, codeName: 'BadValue', errmsg: 'unknown operator: $foo' });
    expect(toAppError(refused)).toBe(refused);
  });
});

describe('ingest commands whose moderation fails for an unknown reason', () => {
  let h: Harness;
  let answers = false;
  /** The engine fails with an error of no known kind while `failing` (a store error the driver does not recognise). */
  let failing = true;
  const real = createEngine({});
  const engine: ModerationEngine = {
    ...real,
    moderate: (...args) => (failing ? Promise.reject(new Error('backend said something new')) : real.moderate(...args)),
  };

  beforeAll(async () => {
    h = await startHarness({ INGEST_MAX_UNEXPECTED_ATTEMPTS: 2 }, engine, () => Promise.resolve(answers));
  });
  afterAll(async () => {
    await h.close();
  });

  it('are kept and retried while the store does not answer, and dead-lettered only once it does', async () => {
    const tenantId = await h.newTenant();
    const dead = await h.collect(h.topics.ingestDeadLetter);
    const producer = h.kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    try {
      const send = (clientId: string) =>
        producer.send({
          topic: h.topics.ingest,
          acks: -1,
          messages: [{ key: clientId, value: JSON.stringify(ingestCommand(tenantId, clientId, 'fine')) }],
        });
      const retries = () => h.logText().split('will retry').length - 1;
      await send('outage-1');
      // Many more failures than INGEST_MAX_UNEXPECTED_ATTEMPTS, and no dead letter: the store does not answer.
      await waitFor(() => retries() >= 6, { timeoutMs: 30000, what: 'the command tried again and again' });
      expect(dead).toHaveLength(0);

      // The store is back, the command still fails: now it is this command's failure, dead-lettered.
      answers = true;
      await waitFor(() => dead.length === 1, { timeoutMs: 30000, what: 'the dead letter' });
      expect(dead[0]?.headers?.[HEADERS.deadLetterReason]?.toString()).toBe('unexpected_error');

      // A command sent after that, with the engine working again, is moderated.
      failing = false;
      await send('outage-2');
      await waitFor(
        () => h.db.collection(COLLECTIONS.records).findOne({ _id: recordIdFor(tenantId, 'outage-2') } as never),
        { timeoutMs: 30000, what: 'the next record' },
      );
    } finally {
      await producer.disconnect();
    }
  });
});
