import { MongoClient } from 'mongodb';
import { loadConfigOf } from './config';
import { createLogger } from '@vigil/proto/platform';
import { recordHashRefill } from './hash-banks/retro/record-hash-reaction';
import { RecordHashStore } from './hash-banks/retro/record-hash-store';
import { EventStore } from './store/event-store';
import { rebuildProjections } from './store/rebuild-projections';

/**
 * `node moderator/dist/rebuild.js` (or `npm run rebuild-projections -w moderator`): drops the projections and rebuilds
 * them from the events, with the hash banks' copies of the records' image hashes (`record_image_hashes`, which
 * retroactive passes read: this also fills it for records moderated before it existed). Reads MONGO_URL and MONGO_DB
 * like the service.
 */
async function main(): Promise<void> {
  const env = loadConfigOf(['MONGO_URL', 'MONGO_DB', 'LOG_LEVEL']);
  const log = createLogger(env.LOG_LEVEL, 'moderator-rebuild');
  const mongo = new MongoClient(env.MONGO_URL, { serverSelectionTimeoutMS: 5000 });
  try {
    const db = mongo.db(env.MONGO_DB);
    const hashes = new RecordHashStore(db);
    await hashes.ensureIndexes();
    const report = await rebuildProjections(new EventStore(db), recordHashRefill(hashes));
    log.info(report, 'projections rebuilt');
  } finally {
    await mongo.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`rebuild failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
