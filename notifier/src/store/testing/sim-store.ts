import { brokenInsertError, duplicateKeyError } from '@vigil/proto/dist/testing/driver-errors';
import { MongoNetworkError, type Db } from 'mongodb';

// For specs: an in-memory store that behaves like FerretDB v1 for the calls the notifier's queues make. Updates read,
// then write by `_id` (so two racing updates can both match, and one can be lost); an insert of several documents can
// stop part way; a command can fail before it runs or lose its reply after; latency can spike. All of it is driven by
// a seeded generator, so a run can be replayed.

/** The seeded generator that drives a simulated run (a seed replays it). */
export { random } from '../../../../deploy/bench/seeded-random';

export type Doc = { _id: string } & Record<string, unknown>;
type Filter = Record<string, unknown>;
type Update = Partial<Record<'$set' | '$unset' | '$push' | '$inc' | '$max', Record<string, unknown>>>;

const isDate = (value: unknown): value is Date => value instanceof Date;
export function copy<T>(value: T): T {
  if (isDate(value)) return new Date(value.getTime()) as T;
  if (Array.isArray(value)) return value.map(copy) as T;
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, copy(v)])) as T;
  return value;
}

function matches(doc: Doc, filter: Filter): boolean {
  return Object.entries(filter).every(([field, wanted]) => {
    const value = doc[field];
    if (wanted !== null && typeof wanted === 'object' && !isDate(wanted)) {
      const ops = wanted as { $exists?: boolean; $lt?: Date; $in?: unknown[] };
      if (ops.$exists === false) return value === undefined;
      if (ops.$lt !== undefined) return isDate(value) && value.getTime() < ops.$lt.getTime();
      if (ops.$in !== undefined) return ops.$in.includes(value);
      throw new Error(`unsupported filter ${JSON.stringify(wanted)}`);
    }
    return isDate(value) && isDate(wanted) ? value.getTime() === wanted.getTime() : value === wanted;
  });
}

function apply(doc: Doc, update: Update): void {
  for (const [field, value] of Object.entries(update.$set ?? {})) doc[field] = copy(value);
  for (const field of Object.keys(update.$unset ?? {})) delete doc[field];
  for (const [field, value] of Object.entries(update.$push ?? {})) {
    const each = (value as { $each?: unknown[] }).$each;
    doc[field] = [...((doc[field] as unknown[] | undefined) ?? []), ...(each ?? [value])];
  }
  for (const [field, by] of Object.entries(update.$inc ?? {}))
    doc[field] = ((doc[field] as number | undefined) ?? 0) + (by as number);
  for (const [field, value] of Object.entries(update.$max ?? {}))
    doc[field] = Math.max((doc[field] as number | undefined) ?? -Infinity, value as number);
}

export interface Faults {
  /** Chance that a command fails before it runs, and that it runs but its reply is lost. */
  before: number;
  lost: number;
  /** Chance that an insert of several documents stops part way (those before stored). */
  partial: number;
  /** Chance of a latency spike (up to 1.5 s) on a command. */
  spike: number;
}

/** The store shared by the processes, with the faults of the moment. */
export class SimStore {
  readonly collections = new Map<string, Map<string, Doc>>();
  faults: Faults = { before: 0, lost: 0, partial: 0, spike: 0 };
  commands = 0;
  /** Documents `find` returned, by collection: what reads cost. */
  readonly found = new Map<string, number>();
  /** `latency: false`: commands take no time but a turn of the event loop (for specs on real timers). */
  constructor(
    readonly rng: () => number,
    private readonly options: { latency: boolean } = { latency: true },
  ) {}

  docs(name: string): Map<string, Doc> {
    let docs = this.collections.get(name);
    if (!docs) this.collections.set(name, (docs = new Map<string, Doc>()));
    return docs;
  }

  latency(): Promise<void> {
    if (!this.options.latency) return new Promise((resolve) => setImmediate(resolve));
    const ms = this.rng() < this.faults.spike ? 200 + this.rng() * 1_300 : this.rng() * 4;
    return new Promise((resolve) => setTimeout(resolve, ms));
  }
}

/** One process's connection to the store: dead once its process is killed (every later command fails). */
export class SimConnection {
  killed = false;
  constructor(readonly store: SimStore) {}

  async run<T>(work: () => T | Promise<T>): Promise<T> {
    const { store } = this;
    store.commands += 1;
    await store.latency();
    if (this.killed || store.rng() < store.faults.before) throw new MongoNetworkError('connection reset');
    const result = await work();
    await store.latency();
    if (this.killed || store.rng() < store.faults.lost) throw new MongoNetworkError('reply lost');
    return result;
  }

  db(): Db {
    return { collection: (name: string) => this.collection(name) } as unknown as Db;
  }

  collection(name: string): SimCollection {
    return new SimCollection(this, name);
  }
}

/** The collection calls the queue makes, with FerretDB v1's behaviour (see the file's comment). */
export class SimCollection {
  constructor(
    private readonly conn: SimConnection,
    private readonly name: string,
  ) {}

  /** The collection's name, as the driver's `Collection` gives it. */
  get collectionName(): string {
    return this.name;
  }

  /** Documents `find` has returned from this collection, in all. */
  get found(): number {
    return this.conn.store.found.get(this.name) ?? 0;
  }

  /** The documents as stored (specs read and change them directly). */
  get docs(): Map<string, Doc> {
    return this.conn.store.docs(this.name);
  }

  insertMany(docs: Doc[]) {
    return this.conn.run(() => {
      const store = this.conn.store;
      const stopAt = docs.length > 1 && store.rng() < store.faults.partial ? Math.floor(store.rng() * docs.length) : -1;
      const duplicates: number[] = [];
      for (const [index, doc] of docs.entries()) {
        if (index === stopAt) throw brokenInsertError(docs.length, new Error('invalid byte sequence (SQLSTATE 22P05)'));
        if (this.docs.has(doc._id)) duplicates.push(index);
        else this.docs.set(doc._id, copy(doc));
      }
      if (duplicates.length > 0) throw duplicateKeyError(docs.length, duplicates);
      return { insertedCount: docs.length };
    });
  }

  find(filter: Filter, options: { projection?: Record<string, 1> } = {}) {
    return {
      toArray: () =>
        this.conn.run(() => {
          const fields = Object.keys(options.projection ?? {});
          const found = [...this.docs.values()].filter((doc) => matches(doc, filter));
          const counts = this.conn.store.found;
          counts.set(this.name, (counts.get(this.name) ?? 0) + found.length);
          return found.map((doc) =>
            fields.length === 0
              ? copy(doc)
              : Object.fromEntries(fields.filter((f) => f in doc).map((f) => [f, copy(doc[f])])),
          );
        }),
    };
  }

  findOne(filter: Filter) {
    return this.conn.run(() => {
      const doc = [...this.docs.values()].find((d) => matches(d, filter));
      return doc ? copy(doc) : null;
    });
  }

  /** Read, yield, then write by `_id` (not atomic: two racing calls can both match). */
  private async readThenWrite(filter: Filter, update: Update, many: boolean): Promise<Doc[]> {
    const found = [...this.docs.values()].filter((d) => matches(d, filter));
    const before = (many ? found : found.slice(0, 1)).map(copy);
    await this.conn.store.latency();
    for (const doc of before) {
      const current = this.docs.get(doc._id);
      if (current) apply(current, update);
    }
    return before;
  }

  findOneAndUpdate(filter: Filter, update: Update) {
    return this.conn.run(async () => (await this.readThenWrite(filter, update, false))[0] ?? null);
  }

  updateOne(filter: Filter, update: Update, options: { upsert?: boolean } = {}) {
    return this.conn.run(async () => {
      const matched = await this.readThenWrite(filter, update, false);
      if (matched.length === 0 && options.upsert) {
        const created = { ...filter } as Doc;
        apply(created, update);
        this.docs.set(created._id, created);
      }
      return { matchedCount: matched.length, modifiedCount: matched.length };
    });
  }

  updateMany(filter: Filter, update: Update) {
    return this.conn.run(async () => {
      const matched = await this.readThenWrite(filter, update, true);
      return { matchedCount: matched.length, modifiedCount: matched.length };
    });
  }

  deleteMany(filter: Filter) {
    return this.conn.run(() => {
      let deletedCount = 0;
      for (const [id, doc] of this.docs) {
        if (matches(doc, filter)) {
          this.docs.delete(id);
          deletedCount += 1;
        }
      }
      return { deletedCount };
    });
  }
}
