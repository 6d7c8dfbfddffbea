import { Command, HEADERS, type Topics } from '@vigil/proto';
import { Kafka, logLevel, type IHeaders, type KafkaMessage } from 'kafkajs';
import { headerText } from '../kafka/headers';
import { UnknownTopicError, partitionOffsets, readRanges, type ReadMessage } from '../kafka/topic-reader';
import { checkReplay } from '../service/replay-check';
import type { EventStore } from '../store/event-store';
import { UsageError } from './dead-letters-command';

export const INGEST_DEAD_LETTERS_USAGE = `usage:
  ingest-dead-letters list [--limit N]       the oldest N dead letters in the topic (default 100, at most 10000)
  ingest-dead-letters replay <id> [--force]  send the command back to the ingest topic (--force: even over a change
                                             of its record or user stored after the command was issued)`;

const LIST_DEFAULT = 100;
const LIST_MAX = 10_000;

/** Dead letters are listed without the consumer group of anyone else: each read joins a group of its own. */
const GROUP_PREFIX = 'vigil-moderator-admin';

/** What the commands use: Kafka, the topic names, and the event store to check a replay against. */
export interface IngestDeadLettersDeps {
  kafka: Kafka;
  topics: Topics;
  store: EventStore;
  /** Bound on reading the dead-letter topic (joining a group, fetching), milliseconds. */
  readTimeoutMs: number;
}

/**
 * A Kafka client for the operator commands: it gives up on an unreachable broker after a few seconds (a connection
 * attempt of 3 s, tried three times) instead of the service's patient retries.
 */
export function operatorKafka(brokers: string[]): Kafka {
  return new Kafka({
    clientId: GROUP_PREFIX,
    brokers,
    connectionTimeout: 3000,
    requestTimeout: 10_000,
    retry: { retries: 2, initialRetryTime: 300, maxRetryTime: 2000 },
    logLevel: logLevel.NOTHING,
  });
}

/** A dead letter's id: its coordinates in the dead-letter topic, `topic/partition/offset`. */
export interface DeadLetterId {
  topic: string;
  partition: number;
  offset: bigint;
}

const shown = (text: string) => (text.length > 200 ? `${text.slice(0, 200)}…` : text);

/** Parses `topic/partition/offset`; the topic must be the ingest dead-letter topic. Throws UsageError otherwise. */
export function parseDeadLetterId(id: string, topic: string): DeadLetterId {
  const match = /^(.+)\/(\d{1,9})\/(\d{1,18})$/.exec(id);
  if (!match) throw new UsageError(`malformed dead letter id "${shown(id)}": expected ${topic}/<partition>/<offset>`);
  if (match[1] !== topic) throw new UsageError(`"${shown(id)}" is not in the ingest dead-letter topic ${topic}`);
  return { topic, partition: Number(match[2]), offset: BigInt(match[3]!) };
}

/**
 * The operator commands on the ingest consumer's dead letters (the `ingestDeadLetter` topic), apart from the process
 * glue so tests run them in-process. Returns the lines the CLI prints, one JSON object each: coordinates, reason,
 * tenant, clientId, kind and times, never the command's content.
 */
export async function ingestDeadLettersCommand(deps: IngestDeadLettersDeps, args: string[]): Promise<object[]> {
  try {
    return await run(deps, args);
  } catch (err) {
    if (err instanceof UnknownTopicError) {
      throw new Error(`${err.message}: is KAFKA_TOPIC_PREFIX right? (the moderator creates it when it starts)`);
    }
    // kafkajs' own words name the broker and what failed (`connect ECONNREFUSED 127.0.0.1:9092`).
    if (err instanceof Error && err.name.startsWith('KafkaJS')) {
      throw new Error(`Kafka did not answer: ${err.message}`, { cause: err });
    }
    throw err;
  }
}

async function run(deps: IngestDeadLettersDeps, args: string[]): Promise<object[]> {
  const [verb, ...rest] = args;
  switch (verb) {
    case 'list':
      return list(deps, listLimit(rest));
    case 'replay': {
      const force = rest.includes('--force');
      const ids = rest.filter((arg) => arg !== '--force');
      if (ids.length !== 1 || ids[0]!.startsWith('--')) throw new UsageError(INGEST_DEAD_LETTERS_USAGE);
      return [await replay(deps, parseDeadLetterId(ids[0]!, deps.topics.ingestDeadLetter), force)];
    }
    default:
      throw new UsageError(INGEST_DEAD_LETTERS_USAGE);
  }
}

function listLimit(args: string[]): number {
  if (args.length === 0) return LIST_DEFAULT;
  const [flag, value, ...extra] = args;
  if (flag !== '--limit' || value === undefined || extra.length > 0) throw new UsageError(INGEST_DEAD_LETTERS_USAGE);
  const limit = /^\d{1,6}$/.test(value) ? Number(value) : NaN;
  if (!(limit >= 1 && limit <= LIST_MAX)) throw new UsageError(`--limit is a whole number from 1 to ${LIST_MAX}`);
  return limit;
}

/** The oldest `limit` dead letters still in the topic (at most `limit` read from each partition), oldest first. */
async function list(deps: IngestDeadLettersDeps, limit: number): Promise<object[]> {
  const topic = deps.topics.ingestDeadLetter;
  const offsets = await partitionOffsets(deps.kafka, topic);
  const read = await readRanges(
    deps.kafka,
    topic,
    offsets.map(({ partition, low, high }) => ({ partition, from: low, until: high, max: limit })),
    { groupPrefix: GROUP_PREFIX, timeoutMs: deps.readTimeoutMs },
  );
  return read
    .sort(
      (a, b) =>
        Number(a.message.timestamp) - Number(b.message.timestamp) ||
        a.partition - b.partition ||
        Number(BigInt(a.message.offset) - BigInt(b.message.offset)),
    )
    .slice(0, limit)
    .map((item) => view(topic, item));
}

/**
 * What an operator may see of a dead letter: where it is and where it came from, why it was set aside, and the
 * tenant, clientId, kind and id of its command from the key and headers (`tenant:clientId`, users
 * `tenant:user:clientId`). Never the value: content, names, emails and metadata stay in Kafka.
 */
function view(topic: string, { partition, message }: ReadMessage) {
  const header = (name: string) => headerText(message.headers, name) ?? null;
  const kind = header(HEADERS.eventType);
  const key = message.key?.toString('utf8') ?? '';
  const colon = key.indexOf(':');
  let clientId = colon > 0 ? key.slice(colon + 1) : null;
  if (kind === 'IngestUser' && clientId?.startsWith('user:')) clientId = clientId.slice('user:'.length);
  return {
    id: `${topic}/${partition}/${message.offset}`,
    timestamp: new Date(Number(message.timestamp)).toISOString(),
    reason: header(HEADERS.deadLetterReason),
    source: header(HEADERS.deadLetterSource),
    tenantId: colon > 0 ? key.slice(0, colon) : null,
    clientId,
    kind,
    commandId: header(HEADERS.eventId),
    replayOf: header(HEADERS.replayOf),
    bytes: message.value?.length ?? 0,
  };
}

/** Headers a replay does not carry over: the dead letter's own, and those of an earlier replay. */
const DEAD_LETTER_HEADERS: readonly string[] = [
  HEADERS.deadLetterReason,
  HEADERS.deadLetterSource,
  HEADERS.replayOf,
  HEADERS.replayForce,
];

async function replay(deps: IngestDeadLettersDeps, id: DeadLetterId, force: boolean): Promise<object> {
  const name = `${id.topic}/${id.partition}/${id.offset}`;
  const letter = await readOne(deps, id);
  const reason = headerText(letter.headers, HEADERS.deadLetterReason) ?? 'unknown';
  if (letter.value === null) {
    const source = headerText(letter.headers, HEADERS.deadLetterSource) ?? 'unknown';
    throw new UsageError(
      `dead letter ${name} (${reason}) holds only where its command was read, ${source}: the dead-letter topic ` +
        'refused the command itself, so it cannot be replayed from there; have the client send it again',
    );
  }
  let command: Command;
  try {
    command = Command.parse(JSON.parse(letter.value.toString('utf8')));
  } catch {
    throw new UsageError(
      `dead letter ${name} (${reason}) is not a command this moderator can apply: a replay would be set aside again`,
    );
  }
  const check = await checkReplay(deps.store, command);
  if (check.kind === 'applied') {
    throw new UsageError(`dead letter ${name}: its command ${command.id} is applied already (replayed before)`);
  }
  if (check.kind === 'newer' && !force) {
    throw new UsageError(
      `dead letter ${name}: ${check.stream} changed after its command was issued (${check.type}, version ` +
        `${check.version}, at ${check.occurredAt}), and a replay would undo that change; have the client send the ` +
        'record again, or replay with --force to apply this older command over it',
    );
  }
  const headers: IHeaders = Object.fromEntries(
    Object.entries(letter.headers ?? {}).filter(([header]) => !DEAD_LETTER_HEADERS.includes(header)),
  );
  headers[HEADERS.replayOf] = name;
  if (force) headers[HEADERS.replayForce] = 'true';
  const producer = deps.kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
  await producer.connect();
  try {
    // Same key, so the same partition as the record's other commands, and after them.
    const [sent] = await producer.send({
      topic: deps.topics.ingest,
      acks: -1,
      messages: [{ key: letter.key, value: letter.value, headers }],
    });
    return {
      id: name,
      replayed: true,
      reason,
      commandId: command.id,
      kind: command.type,
      tenantId: command.tenantId,
      to: `${deps.topics.ingest}/${sent?.partition ?? '?'}/${sent?.baseOffset ?? '?'}`,
      forced: force,
      ...(check.kind === 'newer' ? { over: { stream: check.stream, type: check.type, version: check.version } } : {}),
    };
  } finally {
    await producer.disconnect();
  }
}

/** The dead letter at `id`; UsageError when the topic holds none there (never written, or removed by retention). */
async function readOne(deps: IngestDeadLettersDeps, id: DeadLetterId): Promise<KafkaMessage> {
  const name = `${id.topic}/${id.partition}/${id.offset}`;
  const partition = (await partitionOffsets(deps.kafka, id.topic)).find((entry) => entry.partition === id.partition);
  if (!partition || id.offset < partition.low || id.offset >= partition.high) {
    const holds = partition
      ? partition.low < partition.high
        ? `partition ${id.partition} holds offsets ${partition.low} to ${partition.high - 1n}`
        : `partition ${id.partition} is empty`
      : `the topic has no partition ${id.partition}`;
    throw new UsageError(`no dead letter ${name}: ${holds}`);
  }
  const [found] = await readRanges(
    deps.kafka,
    id.topic,
    [{ partition: id.partition, from: id.offset, until: id.offset + 1n, max: 1 }],
    { groupPrefix: GROUP_PREFIX, timeoutMs: deps.readTimeoutMs },
  );
  if (!found || found.message.offset !== id.offset.toString()) throw new UsageError(`no dead letter ${name}`);
  return found.message;
}
