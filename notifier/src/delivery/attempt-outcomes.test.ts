import type { WebhookEndpointDoc } from '@vigil/proto';
import pino from 'pino';
import type { DeliveryAttempt, DeliveryDoc } from '../store/delivery-store';
import { AttemptOutcomes, answerKind, type AttemptResult, type Outcome } from './attempt-outcomes';
import type { SendResult } from './http-sender';

const SCHEDULE_S = [5, 300, 1800];
const DISABLE_AFTER_MS = 5 * 86_400_000;
const log = pino({ level: 'silent' });
const endpoint = { _id: 'we_1', tenantId: 'ten_1' } as unknown as WebhookEndpointDoc;
const delivery = (fields: Partial<DeliveryDoc> = {}): DeliveryDoc =>
  ({ _id: 'dlv_1', endpointId: 'we_1', attemptCount: 0, cycleAttempts: 0, ...fields }) as unknown as DeliveryDoc;

/**
 * Outcomes over an in-memory store and endpoint health. The jitter draw is 0.5, so a retry's delay is the schedule's
 * step exactly. `failingFor`: how long the endpoint has been failing when a failure is decided.
 */
function outcomesOf({ recorded = true, failingFor = 0 }: { recorded?: boolean; failingFor?: number } = {}) {
  const writes: { attempt: DeliveryAttempt; next: Outcome['next'] }[] = [];
  const health: string[] = [];
  const results: AttemptResult[] = [];
  let notRecorded = 0;
  const outcomes = new AttemptOutcomes({
    store: {
      recordAttempt: (_doc, attempt, next) => {
        writes.push({ attempt, next });
        return Promise.resolve(recorded);
      },
    },
    health: {
      succeeded: () => {
        health.push('succeeded');
        return Promise.resolve();
      },
      failingSince: (_endpoint, now) => {
        health.push('failing');
        return Promise.resolve(new Date(now.getTime() - failingFor));
      },
      disable: (_endpoint, reason) => {
        health.push(`disabled: ${reason}`);
        return Promise.resolve(true);
      },
    },
    retryScheduleS: SCHEDULE_S,
    retryAfterMaxMs: 3600_000,
    disableAfterMs: DISABLE_AFTER_MS,
    onAttempt: (result) => results.push(result),
    onOutcomeNotRecorded: () => (notRecorded += 1),
    random: () => 0.5,
  });
  return { outcomes, writes, health, results, notRecorded: () => notRecorded };
}

/** The outcome of one answer, and the window of clock readings its retry time was taken in. */
async function answer(run: ReturnType<typeof outcomesOf>, result: SendResult, doc = delivery()) {
  const at = new Date();
  const outcome = await run.outcomes.answered(doc, endpoint, null, at, result, log);
  return { outcome, at, until: Date.now() };
}

function dueIn(outcome: Outcome): Date {
  if (outcome.next.state !== 'pending') throw new Error(`expected pending, got ${outcome.next.state}`);
  return outcome.next.dueAt;
}

describe('answerKind', () => {
  it.each([
    [200, 'success'],
    [299, 'success'],
    [199, 'failure'],
    [300, 'failure'],
    [410, 'gone'],
    [503, 'failure'],
    [undefined, 'failure'],
  ] as const)('counts status %p as %s', (statusCode, kind) => {
    expect(answerKind(statusCode)).toBe(kind);
  });
});

describe('AttemptOutcomes', () => {
  it('makes a 2xx answer succeeded, and writes the endpoint’s success only once the outcome is stored', async () => {
    const run = outcomesOf();
    const { outcome, at } = await answer(run, { statusCode: 204, durationMs: 12, responseBody: 'ok' });
    expect(outcome.attempt).toEqual({ at, durationMs: 12, statusCode: 204, responseBody: 'ok' });
    expect(outcome.next).toEqual({ state: 'succeeded' });
    expect(run.results).toEqual(['success']);
    expect(run.health).toEqual([]);
    await outcome.after();
    expect(run.health).toEqual(['succeeded']);
  });

  it('makes a 410 failed with no retry, and disables the endpoint as gone once stored', async () => {
    const run = outcomesOf();
    const { outcome } = await answer(run, { statusCode: 410, durationMs: 3 });
    expect(outcome.next).toEqual({ state: 'failed' });
    expect(run.results).toEqual(['gone']);
    expect(run.health).toEqual([]);
    await outcome.after();
    expect(run.health).toEqual(['disabled: gone']);
  });

  it('makes a 5xx pending, due after the schedule’s first step, and starts the endpoint’s failing streak', async () => {
    const run = outcomesOf();
    const { outcome, at, until } = await answer(run, { statusCode: 500, durationMs: 3 });
    const due = dueIn(outcome).getTime();
    expect(due).toBeGreaterThanOrEqual(at.getTime() + 5_000);
    expect(due).toBeLessThanOrEqual(until + 5_000);
    expect(run.results).toEqual(['http_error']);
    expect(run.health).toEqual(['failing']);
    await outcome.after();
    expect(run.health).toEqual(['failing']);
  });

  it('takes the schedule’s step for the attempts of the delivery’s cycle so far', async () => {
    const run = outcomesOf();
    const { outcome, at, until } = await answer(
      run,
      { statusCode: 500, durationMs: 3 },
      delivery({ cycleAttempts: 1 }),
    );
    const due = dueIn(outcome).getTime();
    expect(due).toBeGreaterThanOrEqual(at.getTime() + 300_000);
    expect(due).toBeLessThanOrEqual(until + 300_000);
  });

  it('waits for a Retry-After later than the schedule’s step', async () => {
    const run = outcomesOf();
    const { outcome, at, until } = await answer(run, { statusCode: 503, durationMs: 3, retryAfter: '120' });
    const due = dueIn(outcome).getTime();
    expect(due).toBeGreaterThanOrEqual(at.getTime() + 120_000);
    expect(due).toBeLessThanOrEqual(until + 120_000);
  });

  it('labels a call that failed without an answer by its error, and retries it', async () => {
    const run = outcomesOf();
    const { outcome } = await answer(run, { error: 'timeout', durationMs: 10_000 });
    expect(outcome.attempt).toEqual(expect.objectContaining({ error: 'timeout' }));
    expect(outcome.attempt.statusCode).toBeUndefined();
    expect(outcome.next.state).toBe('pending');
    expect(run.results).toEqual(['timeout']);
  });

  it('makes the last attempt of the schedule failed, with no retry and the endpoint left enabled', async () => {
    const run = outcomesOf();
    const { outcome } = await answer(run, { statusCode: 500, durationMs: 3 }, delivery({ cycleAttempts: 3 }));
    expect(outcome.next).toEqual({ state: 'failed' });
    await outcome.after();
    expect(run.health).toEqual(['failing']);
  });

  it('makes a failure failed and disables the endpoint when it has been failing for the bound', async () => {
    const run = outcomesOf({ failingFor: DISABLE_AFTER_MS });
    const { outcome } = await answer(run, { statusCode: 500, durationMs: 3 });
    expect(outcome.next).toEqual({ state: 'failed' });
    await outcome.after();
    expect(run.health).toEqual(['failing', 'disabled: failing']);
  });

  it('retries a failure of an endpoint failing for just under the bound', async () => {
    const run = outcomesOf({ failingFor: DISABLE_AFTER_MS - 60_000 });
    const { outcome } = await answer(run, { statusCode: 500, durationMs: 3 });
    expect(outcome.next.state).toBe('pending');
    await outcome.after();
    expect(run.health).toEqual(['failing']);
  });

  it('retries an attempt that made no call, labelled by why', async () => {
    const run = outcomesOf();
    const attempt = { at: new Date(), error: 'no_active_secret', durationMs: 0 };
    const outcome = await run.outcomes.failed(delivery(), endpoint, attempt, log);
    expect(outcome.attempt).toBe(attempt);
    expect(outcome.next.state).toBe('pending');
    expect(run.results).toEqual(['no_active_secret']);
  });

  it('records an outcome under the lease, then what follows it', async () => {
    const run = outcomesOf();
    const { outcome } = await answer(run, { statusCode: 200, durationMs: 2 });
    await run.outcomes.record(delivery(), outcome, log);
    expect(run.writes).toEqual([{ attempt: outcome.attempt, next: { state: 'succeeded' } }]);
    expect(run.notRecorded()).toBe(0);
    expect(run.health).toEqual(['succeeded']);
  });

  it('counts an outcome the store did not take (the lease is another’s), and still runs what follows it', async () => {
    const run = outcomesOf({ recorded: false });
    const { outcome } = await answer(run, { statusCode: 200, durationMs: 2 });
    await run.outcomes.record(delivery(), outcome, log);
    expect(run.notRecorded()).toBe(1);
    expect(run.health).toEqual(['succeeded']);
  });
});
