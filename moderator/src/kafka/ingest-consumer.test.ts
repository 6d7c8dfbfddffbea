import { HEADERS, TenantVersions, topicNames, type Command } from '@vigil/proto';
import type { IHeaders, KafkaMessage, Producer, ProducerRecord } from 'kafkajs';
import pino from 'pino';
import { fakeKafka } from '../../../deploy/test-support/fake-kafka-consumer';
import { ConflictError, UnknownTenantError } from '../domain/errors';
import type { ModerateInput, ModerateResult } from '../service/moderate';
import type { ModerationUseCases } from '../service/moderation-use-cases';
import type { ReplayCheck } from '../service/replay-check';
import type { KnownTenants } from '../store/known-tenants';
import { IngestConsumer } from './ingest-consumer';

const topics = topicNames('t.');

/** The moderation service as the consumer sees it: each call recorded, `moderate` failing with `failures` first. */
function fakeService(options: { failures?: Error[]; replay?: ReplayCheck } = {}) {
  const moderated: ModerateInput[] = [];
  const replayChecks: Command[] = [];
  const failures = [...(options.failures ?? [])];
  const service = {
    moderate: (input: ModerateInput) => {
      const failure = failures.shift();
      if (failure) return Promise.reject(failure);
      moderated.push(input);
      return Promise.resolve({ recordId: 'rec_1', status: 'Compliant', duplicate: false } as ModerateResult);
    },
    checkReplay: (command: Command) => {
      replayChecks.push(command);
      return Promise.resolve(options.replay ?? ({ kind: 'ok' } as unknown as ReplayCheck));
    },
  } as unknown as ModerationUseCases;
  return { service, moderated, replayChecks };
}

function setup(options: { failures?: Error[]; replay?: ReplayCheck; knownTenants?: string[] } = {}) {
  const { kafka, deliver, committed } = fakeKafka(topics.ingest);
  const { service, moderated, replayChecks } = fakeService(options);
  const known = new Set(options.knownTenants ?? ['ten_1']);
  const tenants = {
    assertKnown: (tenantId: string) =>
      known.has(tenantId) ? Promise.resolve() : Promise.reject(new UnknownTenantError('unknown tenant', { tenantId })),
  } as unknown as KnownTenants;
  const deadLetters: ProducerRecord[] = [];
  const producer = {
    send: (record: ProducerRecord) => {
      deadLetters.push(record);
      return Promise.resolve([]);
    },
  } as unknown as Producer;
  const outcomes: string[] = [];
  const consumer = new IngestConsumer({
    kafka,
    groupId: 'moderator',
    timing: { sessionTimeoutMs: 600_000, heartbeatIntervalMs: 60_000, rebalanceTimeoutMs: 600_000 },
    topics,
    service,
    tenants,
    versions: new TenantVersions(),
    producer,
    log: pino({ level: 'silent' }),
    concurrency: 1,
    retryInitialMs: 1,
    retryMaxMs: 2,
    maxUnexpectedAttempts: 3,
    onOutcome: (outcome) => outcomes.push(outcome),
  });
  const reasons = () =>
    deadLetters.flatMap((record) =>
      record.messages.map((m) => String((m.headers as IHeaders)[HEADERS.deadLetterReason])),
    );
  return { consumer, deliver, committed, moderated, replayChecks, deadLetters, reasons, outcomes };
}

const ingest = (overrides: Record<string, unknown> = {}) => ({
  id: 'cmd_1',
  type: 'IngestRecord',
  tenantId: 'ten_1',
  issuedAt: '2026-01-01T00:00:00.000Z',
  correlationId: 'corr_1',
  moderationId: 'mod_1',
  data: { clientId: 'post-1', name: 'Hello', entity: 'post', content: { text: 'hello' } },
  ...overrides,
});

function message(value: unknown, offset = '0', headers: IHeaders = {}): KafkaMessage {
  return {
    key: Buffer.from('ten_1/post-1'),
    value: Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)),
    offset,
    headers,
    timestamp: '0',
    attributes: 0,
  };
}

describe('IngestConsumer', () => {
  it('applies a valid ingest command through the moderation use case and commits after it', async () => {
    const t = setup();
    await t.consumer.start();
    await t.deliver([message(ingest(), '41')]);
    expect(t.moderated).toHaveLength(1);
    expect(t.moderated[0]).toMatchObject({ tenantId: 'ten_1', clientId: 'post-1', commandId: 'cmd_1', sampled: true });
    expect(t.outcomes).toEqual(['applied']);
    expect(t.deadLetters).toHaveLength(0);
    expect(t.committed).toEqual([{ topic: topics.ingest, partition: 0, offset: '42' }]);
  });

  it.each([
    ['invalid JSON', '{"id": "cmd_1", ', 'invalid_json'],
    [
      'an invalid command',
      { ...ingest(), data: { name: 'no clientId' } },
      'invalid_command: data.clientId,data.entity,data.content',
    ],
    ['a command of an unknown tenant', ingest({ tenantId: 'ten_gone' }), 'unknown_tenant'],
  ])('dead-letters %s with its reason, applies nothing and moves on', async (_name, value, reason) => {
    const t = setup();
    await t.consumer.start();
    await t.deliver([message(value, '7')]);
    expect(t.reasons()).toEqual([reason]);
    expect(t.deadLetters[0]?.topic).toBe(topics.ingestDeadLetter);
    expect(t.moderated).toHaveLength(0);
    expect(t.outcomes).toEqual(['dead_letter']);
    expect(t.committed).toEqual([{ topic: topics.ingest, partition: 0, offset: '8' }]);
  });

  it('dead-letters a replay older than a change stored since as stale_replay', async () => {
    const t = setup({ replay: { kind: 'newer' } as unknown as ReplayCheck });
    await t.consumer.start();
    await t.deliver([message(ingest(), '3', { [HEADERS.replayOf]: 'ten_1/post-1@2' })]);
    expect(t.replayChecks).toHaveLength(1);
    expect(t.reasons()).toEqual(['stale_replay']);
    expect(t.moderated).toHaveLength(0);
  });

  it('applies a replay that no newer change overtook, and a forced one without checking', async () => {
    const t = setup({ replay: { kind: 'newer' } as unknown as ReplayCheck });
    await t.consumer.start();
    await t.deliver([message(ingest(), '3', { [HEADERS.replayOf]: 'x', [HEADERS.replayForce]: 'true' })]);
    expect(t.replayChecks).toHaveLength(0);
    expect(t.moderated).toHaveLength(1);
    const fresh = setup();
    await fresh.consumer.start();
    await fresh.deliver([message(ingest(), '3', { [HEADERS.replayOf]: 'x' })]);
    expect(fresh.replayChecks).toHaveLength(1);
    expect(fresh.moderated).toHaveLength(1);
  });

  it('retries a command that lost to concurrent writers (conflict) until it applies, never dead-lettering it', async () => {
    const t = setup({ failures: [new ConflictError('busy'), new ConflictError('busy'), new ConflictError('busy')] });
    await t.consumer.start();
    await t.deliver([message(ingest(), '5')]);
    expect(t.outcomes).toEqual(['retry', 'retry', 'retry', 'applied']);
    expect(t.moderated).toHaveLength(1);
    expect(t.deadLetters).toHaveLength(0);
    expect(t.committed).toEqual([{ topic: topics.ingest, partition: 0, offset: '6' }]);
  });
});
