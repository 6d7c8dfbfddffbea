import type { Db, MongoClient } from 'mongodb';

/** What the MongoDB-wire store behind a client does differently: FerretDB v1 (the local default), or MongoDB. */
export interface StoreTraits {
  /** The store is FerretDB (its `buildInfo` names a `ferretdbVersion`). */
  ferretdb: boolean;
}

const known = new WeakMap<MongoClient, Promise<StoreTraits>>();

/** The store's traits, asked once per client (`buildInfo`); a failed question is asked again next time. */
export function storeTraits(db: Db): Promise<StoreTraits> {
  let traits = known.get(db.client);
  if (!traits) {
    traits = db
      .admin()
      .command({ buildInfo: 1 })
      .then((info) => ({ ferretdb: typeof info.ferretdbVersion === 'string' }));
    traits.catch(() => known.delete(db.client));
    known.set(db.client, traits);
  }
  return traits;
}

/**
 * Statements of one multi-statement write command (`bulkWrite`) sent to FerretDB at most. FerretDB 1.24 stops
 * answering every command, `ping` included, once about 50 statements of such commands are in flight across its
 * connections: one bulk write of 70 updates did it, and three of 20 at once. It does not recover. With 4 to a command
 * that takes a dozen such commands at once across the whole stack; MongoDB takes any bulk write in one command.
 */
export const FERRETDB_STATEMENTS_PER_COMMAND = 4;

/** The statements of a bulk write, in commands the store takes: all in one on MongoDB, a few at a time on FerretDB. */
export function statementChunks<T>(traits: StoreTraits, statements: readonly T[]): T[][] {
  if (!traits.ferretdb || statements.length <= FERRETDB_STATEMENTS_PER_COMMAND) return [[...statements]];
  const chunks: T[][] = [];
  for (let start = 0; start < statements.length; start += FERRETDB_STATEMENTS_PER_COMMAND) {
    chunks.push(statements.slice(start, start + FERRETDB_STATEMENTS_PER_COMMAND));
  }
  return chunks;
}
