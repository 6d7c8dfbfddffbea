import { COLLECTIONS, HEADERS, recordIdFor, topicNames, type Command } from '@vigil/proto';
import { recordStream } from '../../src/domain/stream-names';
import type { KafkaMessage, Producer } from 'kafkajs';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { testServers, waitFor } from '../../../deploy/test-support';
import { UsageError } from '../../src/admin/dead-letters-command';
import {
  ingestDeadLettersCommand,
  operatorKafka,
  type IngestDeadLettersDeps,
} from '../../src/admin/ingest-dead-letters-command';
import type { RecordState } from '../../src/domain/record';
import { EventStore } from '../../src/store/event-store';
import { ingestCommand, startHarness, type Harness } from './harness';

const MARKER = 'deadletteredcontentmarker';

let h: Harness;
let producer: Producer;
let deps: IngestDeadLettersDeps;
let dead: KafkaMessage[];

beforeAll(async () => {
  h = await startHarness();
  producer = h.kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  deps = { kafka: h.kafka, topics: h.topics, store: new EventStore(h.db), readTimeoutMs: 30000 };
  dead = await h.collect(h.topics.ingestDeadLetter);
});
afterAll(async () => {
  await producer.disconnect();
  await h.close();
});

interface Listed {
  id: string;
  timestamp: string;
  reason: string | null;
  source: string | null;
  tenantId: string | null;
  clientId: string | null;
  kind: string | null;
  commandId: string | null;
  replayOf: string | null;
  bytes: number;
}

/** Sends a command as the gateway does: keyed by record, with its id and type in headers. */
async function send(command: Command, extraHeaders: Record<string, string> = {}): Promise<void> {
  const clientId = command.type === 'IngestUser' ? `user:${command.data.clientId}` : command.data.clientId;
  await producer.send({
    topic: h.topics.ingest,
    acks: -1,
    messages: [
      {
        key: `${command.tenantId}:${clientId}`,
        value: JSON.stringify(command),
        headers: { [HEADERS.eventId]: command.id, [HEADERS.eventType]: command.type, ...extraHeaders },
      },
    ],
  });
}

const reasonOf = (message: KafkaMessage) => message.headers?.[HEADERS.deadLetterReason]?.toString();
const commandIdOf = (message: KafkaMessage) => message.headers?.[HEADERS.eventId]?.toString();
const deadLetterOf = (commandId: string, reason: string) =>
  waitFor(() => dead.find((message) => commandIdOf(message) === commandId && reasonOf(message) === reason), {
    timeoutMs: 30000,
    what: `dead letter ${reason} of ${commandId}`,
  });

const recordOf = (tenantId: string, clientId: string) =>
  h.db.collection<RecordState>(COLLECTIONS.records).findOne({ _id: recordIdFor(tenantId, clientId) });

async function listed(): Promise<Listed[]> {
  return (await ingestDeadLettersCommand(deps, ['list', '--limit', '1000'])) as Listed[];
}

function withText(command: Command, text: string, metadata: Record<string, unknown>): Command {
  if (command.type !== 'IngestRecord') throw new Error('an IngestRecord command');
  command.data.content.text = text;
  command.data.metadata = metadata;
  return command;
}

describe('ingest-dead-letters', () => {
  it('lists a command set aside for an unknown tenant without its content, replays it once the tenant exists, and applies it once', async () => {
    const tenantId = `ten_${randomBytes(8).toString('hex')}`;
    const command = ingestCommand(tenantId, 'early', `${MARKER} hello`);
    await send(command);
    await deadLetterOf(command.id, 'unknown_tenant');

    const letter = (await listed()).find((item) => item.commandId === command.id);
    expect(letter).toMatchObject({
      reason: 'unknown_tenant',
      tenantId,
      clientId: 'early',
      kind: 'IngestRecord',
      replayOf: null,
    });
    expect(letter?.id).toMatch(new RegExp(`^${h.topics.ingestDeadLetter.replace(/\./g, '\\.')}/\\d+/\\d+$`));
    expect(letter?.source).toMatch(new RegExp(`^${h.topics.ingest.replace(/\./g, '\\.')}/\\d+/\\d+$`));
    expect(Date.parse(letter?.timestamp ?? '')).toBeGreaterThan(Date.now() - 120000);
    expect(JSON.stringify(await listed())).not.toContain(MARKER);

    // The cause fixed: the tenant is created (as the gateway's admin CLI does).
    await h.db
      .collection<{ _id: string; name: string; createdAt: Date }>(COLLECTIONS.tenants)
      .insertOne({ _id: tenantId, name: tenantId, createdAt: new Date() });
    await expect(ingestDeadLettersCommand(deps, ['replay', letter!.id])).resolves.toEqual([
      expect.objectContaining({ id: letter!.id, replayed: true, commandId: command.id, forced: false }),
    ]);
    const record = await waitFor(
      async () => {
        const doc = await recordOf(tenantId, 'early');
        return doc?.status ? doc : undefined;
      },
      { timeoutMs: 30000, what: 'replayed command applied' },
    );
    expect(record.recentCommands).toContain(command.id);

    // A second replay is refused: the record remembers the command's id (and the moderator would apply it as a no-op).
    await expect(ingestDeadLettersCommand(deps, ['replay', letter!.id])).rejects.toThrow(
      new UsageError(`dead letter ${letter!.id}: its command ${command.id} is applied already (replayed before)`),
    );
    const events = await h.db
      .collection(COLLECTIONS.events)
      .find({ stream: recordStream(record._id) })
      .toArray();
    expect(events.map((event) => event.type as string)).toEqual(['RecordUpserted', 'RecordModerated']);
    expect((await listed()).filter((item) => item.commandId === command.id)).toHaveLength(1);
    expect(h.logText()).not.toContain(MARKER);
  });

  it('refuses a replay that would undo a newer update unless forced, and sets aside one that turned stale on its way', async () => {
    const tenantId = await h.newTenant();
    const full = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i]));
    const first = withText(ingestCommand(tenantId, 'meta', 'first'), 'first', full);
    await send(first);
    await waitFor(async () => (await recordOf(tenantId, 'meta'))?.recentCommands.includes(first.id), {
      what: 'record with 50 metadata keys',
    });
    // A 51st key: refused after the 202, set aside as validation_error.
    const second = withText(ingestCommand(tenantId, 'meta', 'second'), 'second', { extra: 'x' });
    await send(second);
    await deadLetterOf(second.id, 'validation_error');
    // The client frees a key with a newer update.
    const third = withText(ingestCommand(tenantId, 'meta', 'third'), 'third', { k0: '' });
    await send(third);
    await waitFor(async () => (await recordOf(tenantId, 'meta'))?.recentCommands.includes(third.id), {
      what: 'the newer update applied',
    });

    const letter = (await listed()).find((item) => item.commandId === second.id);
    expect(letter).toMatchObject({ reason: 'validation_error', tenantId, clientId: 'meta', kind: 'IngestRecord' });
    await expect(ingestDeadLettersCommand(deps, ['replay', letter!.id])).rejects.toThrow(
      /changed after its command was issued \(RecordUpserted, version 3, at .*\), and a replay would undo that change/,
    );

    // A replay checked while the record was unchanged, reaching the moderator after a newer update: set aside.
    await send(second, { [HEADERS.replayOf]: letter!.id });
    const stale = await deadLetterOf(second.id, 'stale_replay');
    expect(stale.headers?.[HEADERS.replayOf]?.toString()).toBe(letter!.id);
    expect((await recordOf(tenantId, 'meta'))?.content?.text).toBe('third');

    // Forced: the older command is applied over the newer one, as the operator asked.
    await expect(ingestDeadLettersCommand(deps, ['replay', letter!.id, '--force'])).resolves.toEqual([
      expect.objectContaining({ replayed: true, forced: true, over: expect.objectContaining({ version: 3 }) }),
    ]);
    const record = await waitFor(
      async () => {
        const doc = await recordOf(tenantId, 'meta');
        return doc?.recentCommands.includes(second.id) ? doc : undefined;
      },
      { timeoutMs: 30000, what: 'forced replay applied' },
    );
    expect(record.content?.text).toBe('second');
    expect(record.metadata).toMatchObject({ extra: 'x', k1: 1 });
    expect(record.metadata).not.toHaveProperty('k0');
    const listedAfter = await listed();
    expect(listedAfter.find((item) => item.reason === 'stale_replay' && item.commandId === second.id)).toMatchObject({
      replayOf: letter!.id,
    });
  });

  it('refuses unknown and malformed ids with a usage error', async () => {
    const topic = h.topics.ingestDeadLetter;
    await expect(ingestDeadLettersCommand(deps, ['replay', `${topic}/0/999999`])).rejects.toThrow(
      new RegExp(`^no dead letter ${topic.replace(/\./g, '\\.')}/0/999999: partition 0 (is empty|holds offsets)`),
    );
    await expect(ingestDeadLettersCommand(deps, ['replay', `${topic}/99/0`])).rejects.toThrow(
      `no dead letter ${topic}/99/0: the topic has no partition 99`,
    );
    await expect(ingestDeadLettersCommand(deps, ['replay', 'nonsense'])).rejects.toThrow(UsageError);
    await expect(ingestDeadLettersCommand(deps, ['replay', 'nonsense'])).rejects.toThrow(/^malformed dead letter id/);
    await expect(ingestDeadLettersCommand(deps, ['replay', `${h.topics.ingest}/0/0`])).rejects.toThrow(
      /is not in the ingest dead-letter topic/,
    );
    await expect(ingestDeadLettersCommand(deps, ['replay'])).rejects.toThrow(UsageError);
    await expect(ingestDeadLettersCommand(deps, ['list', '--limit', '0'])).rejects.toThrow(UsageError);
    await expect(ingestDeadLettersCommand(deps, ['list', '--limit', '100001'])).rejects.toThrow(UsageError);
    await expect(
      ingestDeadLettersCommand(
        { ...deps, kafka: operatorKafka(testServers().kafkaBrokers), topics: topicNames('nosuch.') },
        ['list'],
      ),
    ).rejects.toThrow('the topic nosuch.vigil.ingest.dlq.v1 does not exist: is KAFKA_TOPIC_PREFIX right?');
  });

  it('runs as the CLI: one JSON line per dead letter, exit 2 for an unknown id, 1 for Kafka out of reach', async () => {
    const tenantId = `ten_${randomBytes(8).toString('hex')}`;
    const command = ingestCommand(tenantId, 'cli', `${MARKER} cli`);
    await send(command);
    await deadLetterOf(command.id, 'unknown_tenant');
    const env = {
      ...process.env,
      MONGO_DB: h.db.databaseName,
      KAFKA_TOPIC_PREFIX: h.topics.ingest.slice(0, -'vigil.ingest.v1'.length),
    };
    const cli = (args: string[], extra: Record<string, string> = {}) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        // The built CLI (`npm run build`), as `npm run moderator-admin` runs it.
        execFile(
          process.execPath,
          [path.join(__dirname, '../../dist/admin/cli.js'), ...args],
          { env: { ...env, ...extra }, timeout: 60000 },
          (err, stdout, stderr) => resolve({ code: err ? (err.code as number) : 0, stdout, stderr }),
        );
      });

    const listing = await cli(['ingest-dead-letters', 'list', '--limit', '1000']);
    expect(listing).toMatchObject({ code: 0, stderr: '' });
    const lines = listing.stdout.trimEnd().split('\n');
    const parsed = lines.map((line) => JSON.parse(line) as Listed);
    expect(parsed.find((item) => item.commandId === command.id)).toMatchObject({ reason: 'unknown_tenant', tenantId });
    expect(listing.stdout).not.toContain(MARKER);

    const unknown = await cli(['ingest-dead-letters', 'replay', `${h.topics.ingestDeadLetter}/0/999999`]);
    expect(unknown).toMatchObject({ code: 2, stdout: '' });
    expect(unknown.stderr).toMatch(/^no dead letter /);
    const away = await cli(['ingest-dead-letters', 'list'], { KAFKA_BROKERS: '127.0.0.1:1' });
    expect(away).toMatchObject({ code: 1, stdout: '' });
    expect(away.stderr).toMatch(/^Kafka did not answer: /);
  });

  it('reports Kafka out of reach after a bounded wait', async () => {
    // Nothing listens on port 1: connections are refused, and the client gives up after its few retries.
    const away = { ...deps, kafka: operatorKafka(['127.0.0.1:1']) };
    const error = await ingestDeadLettersCommand(away, ['list']).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(/^Kafka did not answer: /);
  });
});
