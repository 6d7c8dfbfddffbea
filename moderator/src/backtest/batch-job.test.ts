import pino from 'pino';
import { UnavailableError } from '../domain/errors';
import { BatchJobInterrupted, runBatchJob, type JobOutcome, type RunEnd } from './batch-job';

const job = { _id: 'ra_1', tenantId: 'ten_1' };

/**
 * runBatchJob over an in-memory store whose `finish` does what `finishing` says, with the work given: what it threw,
 * the ends it stored, what `onJob` heard and the messages it logged.
 */
async function pickUp(work: () => Promise<RunEnd>, finishing: () => Promise<void> = () => Promise.resolve()) {
  const ends: string[] = [];
  const outcomes: JobOutcome[] = [];
  const logged: string[] = [];
  const store = {
    job: () => Promise.resolve(job),
    begin: () => Promise.resolve({ run: true as const, attempt: 1 }),
    finish: async (_: string, status: string, outcome: { error: string }) => {
      await finishing();
      ends.push(`${status}:${outcome.error}`);
    },
  };
  const log = pino({ level: 'info' }, { write: (line: string) => logged.push(JSON.parse(line).msg as string) });
  const thrown = await runBatchJob(
    { kind: 'retroaction', store, log, onJob: (outcome) => outcomes.push(outcome) },
    job._id,
    work,
  ).then(
    () => undefined,
    (err: unknown) => err,
  );
  return { thrown, ends, outcomes, logged };
}

const unavailable = () => new UnavailableError('database unavailable');

describe('runBatchJob', () => {
  it('fails a job whose work throws, storing engine_error', async () => {
    const { thrown, ends, outcomes } = await pickUp(() => Promise.reject(new Error('engine broke')));
    expect(thrown).toBeUndefined();
    expect(ends).toEqual(['failed:engine_error']);
    expect(outcomes).toEqual(['failed']);
  });

  it('leaves the job for the next runner, storing no end, when its work finds the store out of reach', async () => {
    const err = unavailable();
    const { thrown, ends, outcomes } = await pickUp(() => Promise.reject(err));
    expect(thrown).toBe(err);
    expect(ends).toEqual([]);
    expect(outcomes).toEqual(['interrupted']);
  });

  it('throws BatchJobInterrupted as it came, storing no end', async () => {
    const err = new BatchJobInterrupted('runner stopping');
    const { thrown, ends, outcomes } = await pickUp(() => Promise.reject(err));
    expect(thrown).toBe(err);
    expect(ends).toEqual([]);
    expect(outcomes).toEqual(['interrupted']);
  });

  it('throws when the failure cannot be stored with the store out of reach, counted unrecorded, so the message comes again', async () => {
    const err = unavailable();
    const { thrown, outcomes, logged } = await pickUp(
      () => Promise.reject(new Error('engine broke')),
      () => Promise.reject(err),
    );
    expect(thrown).toBe(err);
    expect(outcomes).toEqual(['unrecorded']);
    expect(logged).toContain('retroaction failure not stored, left for the next runner');
  });

  it('sets the job aside, logged and counted unrecorded, when the store refuses the failure', async () => {
    const { thrown, outcomes, logged } = await pickUp(
      () => Promise.reject(new Error('engine broke')),
      () => Promise.reject(new Error('refused')),
    );
    expect(thrown).toBeUndefined();
    expect(outcomes).toEqual(['unrecorded']);
    expect(logged).toContain('retroaction failure not stored, set aside');
  });
});
