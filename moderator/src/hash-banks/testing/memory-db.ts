import { duplicateKeyError } from '@vigil/proto/dist/testing/driver-errors';
import { MongoNetworkError, MongoServerError, type Db } from 'mongodb';

// For specs: the store calls the hash bank stores make, in memory (equality filters, `$set`, `$unset`, `$max`, an
// unordered insert that answers its duplicates as the driver does), and a command that fails once, before it runs or
// after it (its reply lost).

type Doc = { _id: string } & Record<string, unknown>;
type Filter = Record<string, unknown>;
type Update = Partial<Record<'$set' | '$unset' | '$max', Record<string, unknown>>>;
type Fault = { collection: string; method: string; when: 'before' | 'lost'; after: number };

const matches = (doc: Doc, filter: Filter) =>
  Object.entries(filter).every(([field, wanted]) => {
    if (wanted !== null && typeof wanted === 'object' && '$gt' in wanted) {
      return String(doc[field]) > String(wanted.$gt);
    }
    return doc[field] === wanted;
  });

class MemoryCollection {
  readonly docs = new Map<string, Doc>();

  constructor(
    private readonly name: string,
    private readonly db: MemoryDb,
  ) {}

  createIndex() {
    return Promise.resolve('index');
  }

  findOne(filter: Filter) {
    return this.run('findOne', () => this.select(filter)[0] ?? null);
  }

  find(filter: Filter) {
    let sorted = false;
    let limit = Infinity;
    const cursor = {
      sort: () => ((sorted = true), cursor),
      limit: (n: number) => ((limit = n), cursor),
      toArray: () =>
        this.run('find', () => {
          const found = this.select(filter);
          if (sorted) found.sort((a, b) => (a._id < b._id ? -1 : 1));
          return found.slice(0, limit);
        }),
    };
    return cursor;
  }

  insertOne(doc: Doc) {
    return this.run('insertOne', () => {
      if (this.docs.has(doc._id)) throw new MongoServerError({ message: 'E11000 duplicate key error', code: 11000 });
      this.docs.set(doc._id, structuredClone(doc));
      return { insertedId: doc._id };
    });
  }

  insertMany(docs: Doc[]) {
    return this.run('insertMany', () => {
      const duplicates: number[] = [];
      docs.forEach((doc, index) => {
        if (this.docs.has(doc._id)) duplicates.push(index);
        else this.docs.set(doc._id, structuredClone(doc));
      });
      if (duplicates.length > 0) throw duplicateKeyError(docs.length, duplicates);
      return { insertedCount: docs.length };
    });
  }

  updateOne(filter: Filter, update: Update, options: { upsert?: boolean } = {}) {
    return this.run('updateOne', () => {
      let doc = this.select(filter)[0];
      if (!doc && options.upsert) doc = { _id: filter._id as string };
      if (!doc) return { matchedCount: 0, modifiedCount: 0 };
      const before = JSON.stringify(doc);
      for (const [field, value] of Object.entries(update.$set ?? {})) doc[field] = structuredClone(value);
      for (const field of Object.keys(update.$unset ?? {})) delete doc[field];
      for (const [field, value] of Object.entries(update.$max ?? {})) {
        doc[field] = Math.max((doc[field] as number | undefined) ?? -Infinity, value as number);
      }
      this.docs.set(doc._id, doc);
      return { matchedCount: 1, modifiedCount: JSON.stringify(doc) === before ? 0 : 1 };
    });
  }

  replaceOne(filter: Filter, next: Doc) {
    return this.run('replaceOne', () => {
      const doc = this.select(filter)[0];
      if (doc) this.docs.set(doc._id, structuredClone(next));
      return { matchedCount: doc ? 1 : 0 };
    });
  }

  deleteOne(filter: Filter) {
    return this.run('deleteOne', () => ({ deletedCount: this.remove(this.select(filter).slice(0, 1)) }));
  }

  deleteMany(filter: Filter) {
    return this.run('deleteMany', () => ({ deletedCount: this.remove(this.select(filter)) }));
  }

  /** Copies of the documents the filter matches (a write goes through `docs`). */
  private select(filter: Filter): Doc[] {
    return [...this.docs.values()].filter((doc) => matches(doc, filter)).map((doc) => structuredClone(doc));
  }

  private remove(docs: Doc[]): number {
    docs.forEach((doc) => this.docs.delete(doc._id));
    return docs.length;
  }

  private run<T>(method: string, command: () => T): Promise<T> {
    const fault = this.db.takeFault(this.name, method);
    if (fault === 'before') return Promise.reject(new MongoNetworkError('connection refused'));
    try {
      const result = command();
      return fault === 'lost' ? Promise.reject(new MongoNetworkError('connection reset')) : Promise.resolve(result);
    } catch (err) {
      // A lost reply hides what the server answered, a refused duplicate included.
      if (fault === 'lost') return Promise.reject(new MongoNetworkError('connection reset'));
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }
}

export class MemoryDb {
  private readonly collections = new Map<string, MemoryCollection>();
  private readonly faults: Fault[] = [];

  asDb(): Db {
    return this as unknown as Db;
  }

  collection(name: string): MemoryCollection {
    let collection = this.collections.get(name);
    if (!collection) {
      collection = new MemoryCollection(name, this);
      this.collections.set(name, collection);
    }
    return collection;
  }

  /** The next `method` on `collection` after `after` others fails: before it runs, or after it ran (its reply lost). */
  fail(collection: string, method: string, when: Fault['when'], after = 0): void {
    this.faults.push({ collection, method, when, after });
  }

  takeFault(collection: string, method: string): Fault['when'] | undefined {
    const at = this.faults.findIndex((fault) => fault.collection === collection && fault.method === method);
    const fault = this.faults[at];
    if (!fault) return undefined;
    if (fault.after > 0) {
      fault.after -= 1;
      return undefined;
    }
    this.faults.splice(at, 1);
    return fault.when;
  }
}
