import { COLLECTIONS, HEADERS, recordIdFor, userIdFor, type Command } from '@vigil/proto';
import { MongoServerError } from 'mongodb';
import { uniqueName, waitFor } from '../../../deploy/test-support';
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

describe('an ingest command whose commit fails after its moderation was judged', () => {
  let h: Harness;
  const real = createEngine({});
  /** Record ids the engine was asked to judge, once per call (its images are fetched once per call). */
  const judged: string[] = [];
  const engine: ModerationEngine = {
    ...real,
    moderate: (input, ...rest) => {
      judged.push(input.name);
      return real.moderate(input, ...rest);
    },
  };

  beforeAll(async () => {
    h = await startHarness({}, engine);
  });
  afterAll(async () => {
    await h.close();
  });

  it('is retried with the judgement it had, not judged again', async () => {
    const tenantId = await h.newTenant();
    const { store } = h.moderator;
    const commit = store.commitTelling.bind(store);
    let failures = 0;
    // The store refuses the record's first commit, as it does in an outage; the command is retried.
    store.commitTelling = (stored, ...streams) => {
      if (failures === 0 && streams.some((stream) => stream.state?.tenantId === tenantId)) {
        failures += 1;
        return Promise.reject(new UnavailableError('database unavailable'));
      }
      return commit(stored, ...streams);
    };
    const producer = h.kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    try {
      const command = ingestCommand(tenantId, 'carried-1', 'fine');
      command.data = { ...command.data, name: `carried-${tenantId}` };
      await producer.send({
        topic: h.topics.ingest,
        acks: -1,
        messages: [{ key: 'carried-1', value: JSON.stringify(command) }],
      });
      await waitFor(
        () =>
          h.db
            .collection(COLLECTIONS.records)
            .findOne({ _id: recordIdFor(tenantId, 'carried-1'), status: 'Compliant' } as never),
        { timeoutMs: 30000, what: 'the moderated record' },
      );
      expect(failures).toBe(1);
      expect(judged.filter((name) => name === `carried-${tenantId}`)).toHaveLength(1);
    } finally {
      store.commitTelling = commit;
      await producer.disconnect();
    }
  });

  it('hands its events to the relay at once when the projection write after their append fails', async () => {
    const tenantId = await h.newTenant();
    const { store } = h.moderator;
    const project = store.projections.project.bind(store.projections);
    let failures = 0;
    // The append goes in; the record's projection write that follows fails once, as in an outage starting between.
    store.projections.project = (streams) => {
      if (failures === 0 && streams.some((stream) => stream.events.some((event) => event.tenantId === tenantId))) {
        failures += 1;
        return Promise.reject(new UnavailableError('database unavailable'));
      }
      return project(streams);
    };
    const events = await h.collect(h.topics.events);
    const producer = h.kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    try {
      await producer.send({
        topic: h.topics.ingest,
        acks: -1,
        messages: [{ key: 'unprojected-1', value: JSON.stringify(ingestCommand(tenantId, 'unprojected-1', 'fine')) }],
      });
      const recordId = recordIdFor(tenantId, 'unprojected-1');
      // Published from memory, not by a sweep of the slot, which waits a minute for this process's own slots.
      const moderated = () =>
        events.find((message) => {
          const event = JSON.parse(message.value?.toString() ?? '{}') as { type?: string; stream?: string };
          return event.type === 'RecordModerated' && event.stream === `record-${recordId}`;
        });
      await waitFor(moderated, { timeoutMs: 30000, what: 'the moderation event' });
      expect(failures).toBe(1);
      expect(moderated()?.headers?.[HEADERS.replayed]).toBeUndefined();
      await waitFor(() => h.db.collection(COLLECTIONS.records).findOne({ _id: recordId } as never), {
        timeoutMs: 30000,
        what: 'the record projected by the retry',
      });
    } finally {
      store.projections.project = project;
      await producer.disconnect();
    }
  });
});

describe('a command found applied when run again after a failure past its append', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({});
  });
  afterAll(async () => {
    await h.close();
  });

  /** Fails the first projection of `tenantId`'s streams once, writing those `written` keeps (an outage between two). */
  const failProjectionOnce = (tenantId: string, written: (kind: string) => boolean) => {
    const { store } = h.moderator;
    const project = store.projections.project.bind(store.projections);
    let failures = 0;
    store.projections.project = async (streams) => {
      if (failures === 0 && streams.some((stream) => stream.events.some((event) => event.tenantId === tenantId))) {
        failures += 1;
        await project(streams.filter((stream) => written(stream.kind)));
        throw new UnavailableError('database unavailable');
      }
      return project(streams);
    };
    return { failures: () => failures, restore: () => (store.projections.project = project) };
  };

  const send = async (key: string, command: Command) => {
    const producer = h.kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    try {
      await producer.send({ topic: h.topics.ingest, acks: -1, messages: [{ key, value: JSON.stringify(command) }] });
    } finally {
      await producer.disconnect();
    }
  };

  it("projects the user whose projection failed while the record's went in", async () => {
    const tenantId = await h.newTenant();
    const fault = failProjectionOnce(tenantId, (kind) => kind === 'record');
    try {
      await send('half-projected', ingestCommand(tenantId, 'half-projected', 'fine', 'half-user'));
      // The retry reads the record's projection, which names the command: the user's must not be left out.
      await waitFor(
        () => h.db.collection(COLLECTIONS.users).findOne({ _id: userIdFor(tenantId, 'half-user') } as never),
        {
          timeoutMs: 30000,
          what: 'the user projected by the retry',
        },
      );
      expect(fault.failures()).toBe(1);
    } finally {
      fault.restore();
    }
  });

  it('projects a re-run whose record projection failed after its append', async () => {
    const tenantId = await h.newTenant();
    const recordId = recordIdFor(tenantId, 'rerun-unprojected');
    const records = h.db.collection<{ _id: string; moderationId?: string }>(COLLECTIONS.records);
    await send('rerun-unprojected', ingestCommand(tenantId, 'rerun-unprojected', 'fine'));
    const first = await waitFor(() => records.findOne({ _id: recordId }), { timeoutMs: 30000, what: 'the record' });
    const fault = failProjectionOnce(tenantId, () => false);
    try {
      const id = uniqueName('cmd');
      const moderationId = uniqueName('mod');
      await send('rerun-unprojected', {
        id,
        type: 'RerunModeration',
        tenantId,
        issuedAt: new Date().toISOString(),
        correlationId: id,
        data: { clientId: 'rerun-unprojected', moderationId },
      });
      // The retry conflicts on the stored version, reads past the projection and finds the command applied: what it
      // appended is projected then.
      await waitFor(() => records.findOne({ _id: recordId, moderationId }), {
        timeoutMs: 30000,
        what: "the re-run's moderation in the record's projection",
      });
      expect(fault.failures()).toBe(1);
      expect(first.moderationId).not.toBe(moderationId);
    } finally {
      fault.restore();
    }
  });
});
