import type { WebhookEndpointDoc } from '@vigil/proto';
import { MongoNetworkError } from 'mongodb';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import type { DeliveryAttempt, DeliveryDoc, DeliveryStore } from '../store/delivery-store';
import type { EndpointStateStore } from '../store/endpoint-states';
import type { UpstreamReads } from '../store/upstream-reads';
import type { EndpointCache } from './endpoint-cache';
import type { HttpSender, SendResult } from './http-sender';
import type { FirstAttemptFate } from './delivery-intake';
import { DeliveryScheduler, type AttemptResult } from './scheduler';
import { waitFor } from '../../../deploy/test-support';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const SCHEDULE_S = [5, 300, 1800];

const endpoint = (secrets: WebhookEndpointDoc['secrets']): WebhookEndpointDoc =>
  ({
    _id: 'we_1',
    tenantId: 'ten_1',
    url: 'https://example.com/hook',
    events: [],
    enabled: true,
    secrets,
  }) as unknown as WebhookEndpointDoc;

const delivery = (): DeliveryDoc =>
  ({
    _id: 'dlv_1',
    tenantId: 'ten_1',
    endpointId: 'we_1',
    webhookId: 'msg_1',
    eventId: 'evt_1',
    event: 'record.flagged',
    subjectId: 'mod_1',
    body: '{"event":"record.flagged","timestamp":"1764000000000","id":"mod_1","payload":{}}',
    state: 'sending',
    attemptCount: 0,
    cycleAttempts: 0,
    attempts: [],
    dueAt: new Date(),
    createdAt: new Date(),
    updatedAt: new Date(),
  }) as unknown as DeliveryDoc;

interface Recorded {
  attempt: DeliveryAttempt;
  next: { state: string; dueAt?: Date };
}

/**
 * Runs one delivery through a scheduler whose store, endpoint cache and HTTP sender are in memory: the delivery is
 * handed over as one inserted already leased (reserve, adopt), and `stop` waits until its outcome is recorded.
 */
async function attemptOnce(
  result: SendResult | undefined,
  secrets: WebhookEndpointDoc['secrets'],
  first?: FirstAttemptFate,
  fields: Partial<DeliveryDoc> = {},
  /** Handed to the outcome writer: what the slots and the endpoint's health were before its insert was confirmed. */
  behind?: { written: Promise<void>; confirm: () => void },
  /**
   * `leaseLost`: the store takes no outcome (the delivery's lease is another's). `healthFailures`: the endpoint's health
   * writes that fail (the store out of reach) before one goes through.
   */
  faults: { leaseLost?: boolean; healthFailures?: number; endpointReadFailures?: number } = {},
) {
  const recorded: Recorded[] = [];
  const notRecorded: Recorded[] = [];
  const disabled: string[] = [];
  const succeeded: string[] = [];
  const store = {
    claim: () => Promise.resolve([]),
    pruneLeases: () => Promise.resolve(0),
    recordAttempt: (_doc: DeliveryDoc, attempt: DeliveryAttempt, next: Recorded['next']) => {
      (faults.leaseLost ? notRecorded : recorded).push({ attempt, next });
      return Promise.resolve(!faults.leaseLost);
    },
  } as unknown as DeliveryStore;
  let healthFailures = faults.healthFailures ?? 0;
  const endpointStates = {
    endpointSucceeded: (e: WebhookEndpointDoc) => {
      succeeded.push(e._id);
      if (healthFailures-- > 0) return Promise.reject(new MongoNetworkError('connection reset'));
      return Promise.resolve(null);
    },
    endpointFailed: (_e: WebhookEndpointDoc, now: Date) => Promise.resolve(now),
    disableEndpoint: (e: WebhookEndpointDoc, reason: string, now: Date) => {
      disabled.push(reason);
      return Promise.resolve({ disabledAt: now, disabledReason: reason });
    },
  } as unknown as EndpointStateStore;
  const target = endpoint(secrets);
  let endpointReadFailures = faults.endpointReadFailures ?? 0;
  const endpoints = {
    get: () =>
      endpointReadFailures-- > 0
        ? Promise.reject(new MongoNetworkError('connection reset'))
        : Promise.resolve({ endpoint: target, state: null }),
    changed: () => {},
  } as unknown as EndpointCache;
  const sent: { url: string; headers: Record<string, string>; body: string }[] = [];
  const sender: HttpSender = {
    send: (url, headers, body) => {
      sent.push({ url, headers, body });
      return Promise.resolve(result ?? { durationMs: 1 });
    },
    close: () => Promise.resolve(),
  };
  const results: AttemptResult[] = [];
  let outcomesNotRecorded = 0;
  let healthWritesFailed = 0;
  const scheduler = new DeliveryScheduler({
    store,
    endpointStates,
    reads: {} as UpstreamReads,
    endpoints,
    sender,
    log: pino({ level: 'silent' }),
    retryScheduleS: SCHEDULE_S,
    retryAfterMaxMs: 3600_000,
    disableAfterMs: 5 * 86_400_000,
    concurrency: 4,
    perEndpointConcurrency: 2,
    pollMs: 60_000,
    leaseMs: 30_000,
    attemptMs: 15_000,
    projectionWaitMs: 10_000,
    slowAttemptMs: 10,
    onAttempt: (attemptResult) => results.push(attemptResult),
    onOutcomeNotRecorded: () => (outcomesNotRecorded += 1),
    healthWrites: { attempts: 3, backoff: { initialMs: 1, maxMs: 2 } },
    onHealthWriteFailed: () => (healthWritesFailed += 1),
  });
  scheduler.start();
  const doc = { ...delivery(), ...fields };
  expect(scheduler.reserve(doc.endpointId)).toBe(true);
  // A first attempt is made before the delivery is stored; `first` is what then became of the delivery.
  let answered: DeliveryDoc | undefined;
  let beforeInsert: { slots: { workers: number; endpoints: number }; succeeded: string[] } | undefined;
  if (first) {
    const attempt = scheduler.sendFirst(doc);
    answered = await attempt.answered;
    attempt.decide(first, behind?.written);
    if (behind) {
      await waitFor(() => scheduler.slots.workers === 0, { timeoutMs: 5_000, intervalMs: 2, what: 'the slots back' });
      beforeInsert = { slots: scheduler.slots, succeeded: [...succeeded] };
      behind.confirm();
    }
  } else scheduler.adopt(doc);
  await scheduler.stop();
  const slow = scheduler.isSlow(doc.endpointId);
  return {
    recorded,
    notRecorded,
    outcomesNotRecorded,
    healthWritesFailed,
    disabled,
    succeeded,
    sent,
    results,
    doc,
    answered,
    slow,
    slots: scheduler.slots,
    beforeInsert,
  };
}

const activeSecret = [{ secret: SECRET, createdAt: new Date('2026-01-01T00:00:00Z') }];

describe('DeliveryScheduler', () => {
  it('sends a 2xx-answered delivery once, signed, and records it succeeded', async () => {
    const run = await attemptOnce({ statusCode: 204, durationMs: 12 }, activeSecret);
    expect(run.sent).toHaveLength(1);
    const [request] = run.sent;
    expect(request!.url).toBe('https://example.com/hook');
    expect(request!.body).toBe(run.doc.body);
    expect(request!.headers['webhook-id']).toBe('msg_1');
    // Checked with the Standard Webhooks library, not with our signer.
    expect(() => new Webhook(SECRET).verify(request!.body, request!.headers)).not.toThrow();
    expect(run.recorded).toEqual([
      { attempt: expect.objectContaining({ statusCode: 204, durationMs: 12 }), next: { state: 'succeeded' } },
    ]);
    expect(run.succeeded).toEqual(['we_1']);
    expect(run.results).toEqual(['success']);
    // The endpoint's slot and the worker's are given back.
    expect(run.slots).toEqual({ workers: 0, endpoints: 0 });
  });

  it('records a 410 Gone as failed, disables the endpoint and schedules no retry', async () => {
    const run = await attemptOnce({ statusCode: 410, durationMs: 3 }, activeSecret);
    expect(run.recorded).toEqual([
      { attempt: expect.objectContaining({ statusCode: 410 }), next: { state: 'failed' } },
    ]);
    expect(run.disabled).toEqual(['gone']);
    expect(run.results).toEqual(['gone']);
  });

  it('retries a 5xx no sooner than its Retry-After', async () => {
    const run = await attemptOnce({ statusCode: 503, durationMs: 3, retryAfter: '120' }, activeSecret);
    const [{ attempt, next }] = run.recorded as [Recorded];
    expect(attempt.statusCode).toBe(503);
    expect(next.state).toBe('pending');
    const delay = next.dueAt!.getTime() - attempt.at.getTime();
    expect(delay).toBeGreaterThanOrEqual(120_000);
    expect(delay).toBeLessThan(121_000);
    expect(run.disabled).toEqual([]);
    expect(run.results).toEqual(['http_error']);
  });

  it('retries a 5xx without Retry-After after the first step of the schedule, with jitter', async () => {
    const run = await attemptOnce({ statusCode: 500, durationMs: 3 }, activeSecret);
    const [{ attempt, next }] = run.recorded as [Recorded];
    const delay = next.dueAt!.getTime() - attempt.at.getTime();
    expect(delay).toBeGreaterThanOrEqual(5_000 * 0.85);
    expect(delay).toBeLessThanOrEqual(5_000 * 1.15);
  });

  it('sends nothing when the endpoint has no active secret, and records the attempt as failed for a retry', async () => {
    const expired = [{ secret: SECRET, createdAt: new Date(0), expiresAt: new Date(Date.now() - 1000) }];
    const run = await attemptOnce({ statusCode: 200, durationMs: 1 }, expired);
    expect(run.sent).toHaveLength(0);
    expect(run.recorded).toEqual([
      {
        attempt: expect.objectContaining({ error: 'no_active_secret' }),
        next: expect.objectContaining({ state: 'pending' }),
      },
    ]);
    expect(run.results).toEqual(['no_active_secret']);
  });
  it('makes a first attempt before the delivery is stored, and leaves its outcome to the insert', async () => {
    const run = await attemptOnce({ statusCode: 200, durationMs: 7 }, activeSecret, 'stored');
    expect(run.sent).toHaveLength(1);
    expect(run.answered).toMatchObject({
      _id: 'dlv_1',
      state: 'succeeded',
      attemptCount: 1,
      cycleAttempts: 1,
      lastStatusCode: 200,
      attempts: [expect.objectContaining({ statusCode: 200, durationMs: 7 })],
    });
    expect(run.answered?.completedAt).toBeInstanceOf(Date);
    // Nothing written to the delivery: the insert carries the outcome. The endpoint's health is written after it.
    expect(run.recorded).toEqual([]);
    expect(run.succeeded).toEqual(['we_1']);
    expect(run.results).toEqual(['success']);
    expect(run.slots).toEqual({ workers: 0, endpoints: 0 });
  });

  it('gives the slots back as a first attempt is handed to the outcome writer, and writes its endpoint’s health once the writer inserted it', async () => {
    let confirm!: () => void;
    const written = new Promise<void>((resolve) => (confirm = resolve));
    const run = await attemptOnce({ statusCode: 200, durationMs: 7 }, activeSecret, 'stored', {}, { written, confirm });
    expect(run.beforeInsert).toEqual({ slots: { workers: 0, endpoints: 0 }, succeeded: [] });
    expect(run.succeeded).toEqual(['we_1']);
    expect(run.recorded).toEqual([]);
  });

  it('gives a failed first attempt its retry time, to be stored pending', async () => {
    const run = await attemptOnce({ statusCode: 500, durationMs: 3 }, activeSecret, 'stored');
    expect(run.answered).toMatchObject({ state: 'pending', attemptCount: 1, lastError: 'http_500' });
    const delay = run.answered!.dueAt.getTime() - run.answered!.attempts[0]!.at.getTime();
    expect(delay).toBeGreaterThanOrEqual(5_000 * 0.85);
    expect(run.recorded).toEqual([]);
  });

  it('writes the first attempt’s outcome under the lease when the delivery was stored leased before the answer', async () => {
    const run = await attemptOnce({ statusCode: 204, durationMs: 2 }, activeSecret, 'leased');
    expect(run.recorded).toEqual([
      { attempt: expect.objectContaining({ statusCode: 204 }), next: { state: 'succeeded' } },
    ]);
  });

  it('writes nothing for a first attempt whose delivery another notifier stored', async () => {
    const run = await attemptOnce({ statusCode: 204, durationMs: 2 }, activeSecret, 'existed');
    expect(run.recorded).toEqual([]);
    expect(run.slots).toEqual({ workers: 0, endpoints: 0 });
  });

  it('sends no first attempt without an active secret, and records why once the delivery is stored leased', async () => {
    const expired = [{ secret: SECRET, createdAt: new Date(0), expiresAt: new Date(Date.now() - 1000) }];
    const run = await attemptOnce({ statusCode: 200, durationMs: 1 }, expired, 'leased');
    expect(run.answered).toBeUndefined();
    expect(run.sent).toHaveLength(0);
    expect(run.recorded).toEqual([
      {
        attempt: expect.objectContaining({ error: 'no_active_secret' }),
        next: expect.objectContaining({ state: 'pending' }),
      },
    ]);
  });
  it('sends a leased delivery whose first attempt was not made under its lease only while an attempt’s time is left', async () => {
    const leased = (leftMs: number) =>
      attemptOnce(
        { statusCode: 204, durationMs: 2 },
        activeSecret,
        'leased',
        {
          leaseId: 'lease_1',
          leaseUntil: new Date(Date.now() + leftMs),
        },
        undefined,
        { endpointReadFailures: 1 },
      );
    const ample = await leased(25_000);
    expect(ample.sent).toHaveLength(1);
    expect(ample.recorded).toEqual([
      { attempt: expect.objectContaining({ statusCode: 204 }), next: { state: 'succeeded' } },
    ]);
    // 5 s left against an attempt of up to 15 s: it is left to be taken over, and its slot is free.
    const late = await leased(5_000);
    expect(late.sent).toHaveLength(0);
    expect(late.recorded).toEqual([]);
    expect(late.slots).toEqual({ workers: 0, endpoints: 0 });
  });
  it('writes the outcome under its lease when a first attempt’s leased insert existed (an earlier try’s, its reply lost)', async () => {
    const run = await attemptOnce({ statusCode: 204, durationMs: 2 }, activeSecret, 'existed', { leaseId: 'lease_1' });
    expect(run.recorded).toEqual([
      { attempt: expect.objectContaining({ statusCode: 204 }), next: { state: 'succeeded' } },
    ]);
  });
  it('counts an outcome the store did not take because the delivery’s lease is another’s, and still writes the endpoint’s health', async () => {
    const run = await attemptOnce({ statusCode: 204, durationMs: 2 }, activeSecret, undefined, {}, undefined, {
      leaseLost: true,
    });
    expect(run.notRecorded).toEqual([
      { attempt: expect.objectContaining({ statusCode: 204 }), next: { state: 'succeeded' } },
    ]);
    expect(run.outcomesNotRecorded).toBe(1);
    expect(run.succeeded).toEqual(['we_1']);
    expect(run.slots).toEqual({ workers: 0, endpoints: 0 });
  });
  it('tries the endpoint’s health write again when the store fails it after a success was recorded', async () => {
    const run = await attemptOnce({ statusCode: 200, durationMs: 2 }, activeSecret, undefined, {}, undefined, {
      healthFailures: 1,
    });
    expect(run.recorded).toEqual([
      { attempt: expect.objectContaining({ statusCode: 200 }), next: { state: 'succeeded' } },
    ]);
    expect(run.succeeded).toEqual(['we_1', 'we_1']);
    expect(run.healthWritesFailed).toBe(0);
  });
  it('counts an endpoint health write that failed every try, and leaves the recorded outcome as it is', async () => {
    const run = await attemptOnce({ statusCode: 200, durationMs: 2 }, activeSecret, 'stored', {}, undefined, {
      healthFailures: 99,
    });
    expect(run.succeeded).toEqual(['we_1', 'we_1', 'we_1']);
    expect(run.healthWritesFailed).toBe(1);
    expect(run.slots).toEqual({ workers: 0, endpoints: 0 });
  });
  it('marks an endpoint slow when an attempt took longer than the first attempt’s wait, and not when it was quick', async () => {
    expect((await attemptOnce({ statusCode: 200, durationMs: 11 }, activeSecret)).slow).toBe(true);
    expect((await attemptOnce({ statusCode: 200, durationMs: 9 }, activeSecret)).slow).toBe(false);
  });
});
