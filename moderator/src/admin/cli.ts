import { topicNames } from '@vigil/proto';
import { MongoClient } from 'mongodb';
import { loadConfigOf } from '../config';
import { DeadLetterStore } from '../store/dead-letter-store';
import { EventStore } from '../store/event-store';
import { DEAD_LETTERS_USAGE, UsageError, deadLettersCommand } from './dead-letters-command';
import { INGEST_DEAD_LETTERS_USAGE, ingestDeadLettersCommand, operatorKafka } from './ingest-dead-letters-command';
import { REBUILD_USAGE, rebuildTransparencyCounts } from '../transparency/rebuild-counts';
import { HASH_BANKS_USAGE, hashBanksCommand } from '../hash-banks/hash-banks-command';
import { operatorHashBanks } from '../hash-banks/hash-banks.module';
import { HASH_FEEDS_USAGE, hashFeedsCommand } from '../hash-banks/feeds/hash-feeds-command';
import { operatorHashFeeds } from '../hash-banks/feeds/feeds.module';

const USAGE = [DEAD_LETTERS_USAGE, INGEST_DEAD_LETTERS_USAGE, REBUILD_USAGE, HASH_BANKS_USAGE, HASH_FEEDS_USAGE]
  .map((usage, index) => (index === 0 ? usage : usage.replace(/^usage:\n/, '')))
  .join('\n');

/** Bound on reading the ingest dead-letter topic, milliseconds. */
const READ_TIMEOUT_MS = 30_000;

/**
 * Moderator operator CLI, in the image `node dist/admin/cli.js <command>`, from a checkout `npm run moderator-admin --
 * <command>`:
 * - `dead-letters list|replay <eventId>`: the outbox's dead letters (reads MONGO_URL and MONGO_DB like the service);
 * - `ingest-dead-letters list|replay <id>`: the ingest consumer's, in Kafka (also KAFKA_BROKERS, KAFKA_TOPIC_PREFIX);
 * - `transparency-counts rebuild <tenantId> [--before YYYY-MM-DD]`: recounts closed days from the stored events;
 * - `hash-banks list|create|import|hashes|set|withdraw|lookup …`: a tenant's hash banks (docs/hash-banks.md);
 * - `hash-feeds list|add|run|enable|disable|delete …`: a bank's scheduled feeds (also SECRETS_ENCRYPTION_KEY).
 */
async function main(): Promise<void> {
  const [noun, ...rest] = process.argv.slice(2);
  if (noun === 'hash-banks') {
    const env = loadConfigOf(['MONGO_URL', 'MONGO_DB']);
    const mongo = new MongoClient(env.MONGO_URL, { serverSelectionTimeoutMS: 5000 });
    try {
      const result = await hashBanksCommand(operatorHashBanks(mongo.db(env.MONGO_DB)), rest);
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    } finally {
      await mongo.close();
    }
    return;
  }
  if (noun === 'hash-feeds') {
    const env = loadConfigOf(['MONGO_URL', 'MONGO_DB', 'SECRETS_ENCRYPTION_KEY', 'HASH_FEED_ALLOWED_CIDRS']);
    const mongo = new MongoClient(env.MONGO_URL, { serverSelectionTimeoutMS: 5000 });
    try {
      const result = await hashFeedsCommand(operatorHashFeeds(mongo.db(env.MONGO_DB), env), rest);
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    } finally {
      await mongo.close();
    }
    return;
  }
  if (noun === 'transparency-counts') {
    const [verb, tenantId, flag, day] = rest;
    const before = flag === undefined ? new Date().toISOString().slice(0, 10) : day;
    if (
      verb !== 'rebuild' ||
      !tenantId ||
      (flag !== undefined && flag !== '--before') ||
      !before ||
      !/^\d{4}-\d{2}-\d{2}$/.test(before)
    ) {
      throw new UsageError(REBUILD_USAGE);
    }
    const env = loadConfigOf(['MONGO_URL', 'MONGO_DB']);
    const mongo = new MongoClient(env.MONGO_URL, { serverSelectionTimeoutMS: 5000 });
    try {
      const result = await rebuildTransparencyCounts(mongo.db(env.MONGO_DB), tenantId, before);
      process.stdout.write(`${JSON.stringify({ tenantId, before, ...result })}\n`);
    } finally {
      await mongo.close();
    }
    return;
  }
  if (noun !== 'dead-letters' && noun !== 'ingest-dead-letters') throw new UsageError(USAGE);
  if (noun === 'dead-letters') {
    const env = loadConfigOf(['MONGO_URL', 'MONGO_DB']);
    const mongo = new MongoClient(env.MONGO_URL, { serverSelectionTimeoutMS: 5000 });
    try {
      const result = await deadLettersCommand(new DeadLetterStore(mongo.db(env.MONGO_DB)), rest);
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    } finally {
      await mongo.close();
    }
    return;
  }
  const env = loadConfigOf(['MONGO_URL', 'MONGO_DB', 'KAFKA_BROKERS', 'KAFKA_TOPIC_PREFIX']);
  const mongo = new MongoClient(env.MONGO_URL, { serverSelectionTimeoutMS: 5000 });
  try {
    const lines = await ingestDeadLettersCommand(
      {
        kafka: operatorKafka(env.KAFKA_BROKERS),
        topics: topicNames(env.KAFKA_TOPIC_PREFIX),
        store: new EventStore(mongo.db(env.MONGO_DB)),
        readTimeoutMs: READ_TIMEOUT_MS,
      },
      rest,
    );
    // One JSON object a line, so a long list can be filtered with jq or grep.
    for (const line of lines) process.stdout.write(`${JSON.stringify(line)}\n`);
  } finally {
    await mongo.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = err instanceof UsageError ? 2 : 1;
});
