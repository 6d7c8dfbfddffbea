import { MongoClient, MongoServerError, type Db } from 'mongodb';
import { testServers, uniqueName } from '../../test-support';

// The services use only what FerretDB v1 supports: no transactions, no change streams, no TTL indexes.
describe('MongoDB-wire server', () => {
  const client = new MongoClient(testServers().mongoUrl);
  let db: Db;

  beforeAll(async () => {
    await client.connect();
    db = client.db(uniqueName('foundation'));
  });

  afterAll(async () => {
    await db.dropDatabase();
    await client.close();
  });

  it('rejects a duplicate of a unique compound index with code 11000', async () => {
    const events = db.collection('events');
    await events.createIndex({ stream: 1, version: 1 }, { unique: true });
    await events.insertOne({ stream: 's1', version: 1 });
    await events.insertOne({ stream: 's1', version: 2 });
    const duplicate = events.insertOne({ stream: 's1', version: 2 });
    await expect(duplicate).rejects.toBeInstanceOf(MongoServerError);
    await expect(duplicate).rejects.toMatchObject({ code: 11000 });
    expect(await events.countDocuments({ stream: 's1' })).toBe(2);
  });

  it('upserts with findOneAndUpdate and refuses an update whose expected version is stale', async () => {
    const records = db.collection<{ _id: string; version: number; name: string }>('records');
    const created = await records.findOneAndUpdate(
      { _id: 'r1', version: 0 },
      { $set: { name: 'a' }, $inc: { version: 1 } },
      { upsert: true, returnDocument: 'after' },
    );
    expect(created).toMatchObject({ _id: 'r1', version: 1, name: 'a' });

    const updated = await records.findOneAndUpdate(
      { _id: 'r1', version: 1 },
      { $set: { name: 'b' }, $inc: { version: 1 } },
      { returnDocument: 'after' },
    );
    expect(updated).toMatchObject({ version: 2, name: 'b' });

    const stale = await records.findOneAndUpdate({ _id: 'r1', version: 1 }, { $set: { name: 'c' } });
    expect(stale).toBeNull();
    expect(await records.findOne({ _id: 'r1' })).toMatchObject({ version: 2, name: 'b' });
  });

  it('pages through a sorted collection with a cursor on _id', async () => {
    const items = db.collection<{ _id: string; n: number }>('items');
    await items.insertMany(Array.from({ length: 25 }, (_, n) => ({ _id: `i${String(n).padStart(3, '0')}`, n })));
    const seen: number[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await items
        .find(after ? { _id: { $gt: after } } : {})
        .sort({ _id: 1 })
        .limit(10)
        .toArray();
      seen.push(...page.map((item) => item.n));
      if (page.length < 10) break;
      after = page[page.length - 1]?._id;
    }
    expect(seen).toEqual(Array.from({ length: 25 }, (_, n) => n));
  });
});
