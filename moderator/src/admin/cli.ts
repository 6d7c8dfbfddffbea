import { MongoClient } from 'mongodb';
import { loadConfigOf } from '../config';
import { DeadLetterStore } from '../store/dead-letter-store';
import { DEAD_LETTERS_USAGE, UsageError, deadLettersCommand } from './dead-letters-command';

/**
 * Moderator operator CLI: `node dist/admin/cli.js dead-letters list|replay <eventId>` in the image, or
 * `npm run moderator-admin -- dead-letters …` from a checkout. Reads MONGO_URL and MONGO_DB like the service.
 */
async function main(): Promise<void> {
  const env = loadConfigOf(['MONGO_URL', 'MONGO_DB']);
  const [noun, ...rest] = process.argv.slice(2);
  if (noun !== 'dead-letters') throw new UsageError(DEAD_LETTERS_USAGE);
  const mongo = new MongoClient(env.MONGO_URL, { serverSelectionTimeoutMS: 5000 });
  try {
    const result = await deadLettersCommand(new DeadLetterStore(mongo.db(env.MONGO_DB)), rest);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await mongo.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = err instanceof UsageError ? 2 : 1;
});
