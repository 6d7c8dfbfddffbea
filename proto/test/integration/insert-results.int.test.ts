import { scratchDb } from '../../../deploy/test-support';
import { insertEach, insertInOrder, insertUnlessExists } from '../../src/platform/insert-results';

// What the store itself answers, read through the shared insert helpers: duplicates are proven per document, and a
// batch the store refuses part way (PostgreSQL stores no NUL byte, SQLSTATE 22P05) throws instead of counting as done.
describe('insert helpers against the store', () => {
  const scratch = scratchDb('insert_results');
  const docs = scratch.db.collection<{ _id: string; text: string }>('docs');
  afterAll(() => scratch.drop());

  it('answers per document for an unordered insert with duplicates', async () => {
    await docs.insertMany([
      { _id: 'u1', text: 'a' },
      { _id: 'u3', text: 'c' },
    ]);
    const flags = await insertEach(docs, [
      { _id: 'u1', text: 'a' },
      { _id: 'u2', text: 'b' },
      { _id: 'u3', text: 'c' },
      { _id: 'u4', text: 'd' },
    ]);
    expect(flags).toEqual([false, true, false, true]);
    expect((await docs.find({ _id: { $in: ['u2', 'u4'] } }).toArray()).length).toBe(2);
  });

  it('counts what an ordered insert stored before a duplicate', async () => {
    await docs.insertOne({ _id: 'o3', text: 'c' });
    const stored = await insertInOrder(docs, [
      { _id: 'o1', text: 'a' },
      { _id: 'o2', text: 'b' },
      { _id: 'o3', text: 'c' },
      { _id: 'o4', text: 'd' },
    ]);
    expect(stored).toBe(2);
    expect(await docs.findOne({ _id: 'o4' })).toBeNull();
  });

  it('throws for a batch holding a document the store refuses, whatever it stored', async () => {
    const batch = [
      { _id: 'n1', text: 'fine' },
      { _id: 'n2', text: 'nul \u0000 byte' },
      { _id: 'n3', text: 'fine' },
    ];
    let thrown: unknown;
    const flags = await insertEach(docs, batch).catch((err: unknown) => {
      thrown = err;
      return undefined;
    });
    // MongoDB refuses nothing here (it stores the NUL): then every document is inserted, and said so.
    if (flags === undefined) {
      expect(thrown).toBeInstanceOf(Error);
      expect(await docs.findOne({ _id: 'n2' })).toBeNull();
    } else {
      expect(flags).toEqual([true, true, true]);
      expect(await docs.countDocuments({ _id: { $in: ['n1', 'n2', 'n3'] } })).toBe(3);
    }
  });

  it('answers false for one document that exists, true once for a new one', async () => {
    expect(await insertUnlessExists(docs, { _id: 's1', text: 'a' })).toBe(true);
    expect(await insertUnlessExists(docs, { _id: 's1', text: 'a' })).toBe(false);
  });
});
