import { COLLECTIONS, type TdbStatement, type TdbSubmissionDoc } from '@vigil/proto';
import { scratchDb } from '../../../deploy/test-support';
import { retryOf, TdbStore } from '../../src/store/tdb-store';

/** The notifier's Transparency Database collections on the real store: retries, their outcomes, an older release's queue. */
const TIMING = { bucketMs: 1000, graceMs: 500 };
type Outcomes = Parameters<TdbStore['recordOutcomes']>[2];

const scratch = scratchDb('tdbstore');
const db = scratch.db;

afterAll(() => scratch.drop());

const payload = (puid: string) => ({ puid }) as TdbStatement;

const logDoc = (id: string, tenantId: string, extra: Partial<TdbSubmissionDoc> = {}): TdbSubmissionDoc => ({
  _id: id,
  tenantId,
  eventId: id,
  statementId: `sor_${id}`,
  subject: { type: 'record', id: `rec_${id}` },
  payload: payload(id),
  state: 'pending',
  attemptCount: 0,
  attempts: [],
  createdAt: new Date(),
  updatedAt: new Date(),
  ...extra,
});

it('hands statements an earlier release queued one by one to retries, once', async () => {
  const legacy = db.collection<TdbSubmissionDoc>(COLLECTIONS.tdbSubmissions);
  await legacy.insertMany([
    logDoc('L1', 'ten_a', { due: '1', dueAt: new Date() }),
    logDoc('L2', 'ten_a', { state: 'sending', due: '1', dueAt: new Date(), leaseId: 'x', leaseUntil: new Date() }),
    logDoc('L3', 'ten_b', { due: '1', dueAt: new Date(), attemptCount: 2 }),
    logDoc('L4', 'ten_b', { state: 'submitted' }),
  ]);
  const store = new TdbStore(db, TIMING);
  await store.ensureIndexes();
  const retries = await store.retries.find({}).toArray();
  const byTenant = new Map(retries.map((job) => [job.tenantId, job]));
  expect(retries).toHaveLength(3);
  expect(byTenant.get('ten_b')).toMatchObject({ submissionIds: ['L3'], payloads: [{ puid: 'L3' }], attemptCount: 2 });
  for (const id of ['L1', 'L2', 'L3']) {
    const doc = await legacy.findOne({ _id: id });
    expect(doc).toMatchObject({ state: 'pending', batchId: expect.stringMatching(/^tdbr_/) });
    expect(doc?.due).toBeUndefined();
    expect(doc?.leaseId).toBeUndefined();
  }
  expect((await legacy.findOne({ _id: 'L4' }))?.state).toBe('submitted');
  // A second start finds nothing left to hand over.
  await new TdbStore(db, TIMING).ensureIndexes();
  expect(await store.retries.countDocuments({})).toBe(3);
});

it('claims a due retry, records each statement outcome, and keeps only what goes again', async () => {
  const store = new TdbStore(db, TIMING);
  await store.ensureIndexes();
  const docs = ['R1', 'R2', 'R3'].map((id) => logDoc(id, 'ten_c'));
  const job = retryOf('ten_c', docs, 1, new Date(Date.now() - 10));
  await store.queueRetry(job);
  await store.record(docs.map((doc) => ({ ...doc, batchId: job._id })));
  // Another retry since carries R3: this one's outcome leaves it alone.
  await store.submissions.updateOne({ _id: 'R3' }, { $set: { batchId: 'tdbr_other' } });

  const claimed = (await store.claim(new Date(), 60000, 10)).filter((doc) => doc._id === job._id);
  expect(claimed).toHaveLength(1);
  const attempt = { at: new Date(), durationMs: 5, batchSize: 3, statusCode: 422 };
  const again = new Date(Date.now() + 3000);
  const outcomes: Outcomes = [
    { id: 'R1', outcome: { state: 'submitted', tdbUuid: 'uuid-1' } },
    { id: 'R2', outcome: { state: 'pending', dueAt: again }, error: 'batch_refused' },
    { id: 'R3', outcome: { state: 'failed' }, error: 'rejected' },
  ];
  await store.recordOutcomes(claimed[0]!, attempt, outcomes);
  await store.finishRetry(claimed[0]!, attempt, outcomes);
  const after = new Map((await store.submissions.find({ tenantId: 'ten_c' }).toArray()).map((doc) => [doc._id, doc]));
  expect(after.get('R1')).toMatchObject({ state: 'submitted', tdbUuid: 'uuid-1', attemptCount: 1 });
  expect(after.get('R1')?.batchId).toBeUndefined();
  expect(after.get('R2')).toMatchObject({ state: 'pending', batchId: job._id, lastError: 'batch_refused' });
  expect(after.get('R2')?.attempts).toEqual([expect.objectContaining({ statusCode: 422, error: 'batch_refused' })]);
  expect(after.get('R3')).toMatchObject({ state: 'pending', batchId: 'tdbr_other', attempts: [] });
  const kept = await store.retries.findOne({ _id: job._id });
  expect(kept).toMatchObject({ state: 'pending', submissionIds: ['R2'], payloads: [{ puid: 'R2' }], attemptCount: 2 });
  expect(kept?.dueAt.getTime()).toBe(again.getTime());

  // Its last statement submitted: the retry is gone.
  const [next] = (await store.claim(new Date(again.getTime() + 1), 60000, 10)).filter((doc) => doc._id === job._id);
  expect(next).toBeDefined();
  const submitted: Outcomes = [{ id: 'R2', outcome: { state: 'submitted' } }];
  const second = { ...attempt, at: new Date(attempt.at.getTime() + 3000), statusCode: 201 };
  await store.recordOutcomes(next!, second, submitted);
  await store.finishRetry(next!, second, submitted);
  expect(await store.retries.countDocuments({ _id: job._id })).toBe(0);
  expect((await store.submissions.findOne({ _id: 'R2' }))?.state).toBe('submitted');
});

it('records refusals and database ids holding NUL characters without them, with the other statements of the insert', async () => {
  // PostgreSQL, under FerretDB, refuses a string with a NUL; the database's answer is not ours to trust.
  const store = new TdbStore(db, TIMING);
  await store.record([
    logDoc('N1', 'ten_n', { state: 'failed', rejection: { category: ['The selected\u0000 category is invalid.'] } }),
    logDoc('N2', 'ten_n', { state: 'submitted', tdbUuid: 'uuid\u0000-2' }),
    logDoc('N3', 'ten_n', { state: 'submitted', tdbUuid: 'uuid-3' }),
  ]);
  const after = new Map((await store.submissions.find({ tenantId: 'ten_n' }).toArray()).map((doc) => [doc._id, doc]));
  expect(after.get('N1')?.rejection).toEqual({ category: ['The selected category is invalid.'] });
  expect(after.get('N2')?.tdbUuid).toBe('uuid-2');
  expect(after.get('N3')?.tdbUuid).toBe('uuid-3');
});

it('holds a retry while its log is written: no claim takes it before its release, and a hold that ends is taken over', async () => {
  const store = new TdbStore(db, TIMING);
  await store.ensureIndexes();
  const docs = ['G1', 'G2'].map((id) => logDoc(id, 'ten_g'));
  const held = await store.queueHeldRetry(retryOf('ten_g', docs, 1, new Date(Date.now() - 10)), 60000);
  const claimedNow = async (at = new Date()) =>
    (await store.claim(at, 60000, 10)).filter((doc) => doc._id === held._id);
  expect(await claimedNow()).toEqual([]);
  await store.record(docs.map((doc) => ({ ...doc, batchId: held._id })));
  await store.releaseRetry(held, new Date(Date.now() - 10));
  expect(await claimedNow()).toEqual([expect.objectContaining({ submissionIds: ['G1', 'G2'], state: 'sending' })]);

  // A process that died holding its retry: another takes it over once the hold has ended.
  const orphan = await store.queueHeldRetry(retryOf('ten_g', docs, 1, new Date()), 1000);
  const other = new TdbStore(db, TIMING);
  expect((await other.claim(new Date(), 60000, 10)).filter((doc) => doc._id === orphan._id)).toEqual([]);
  const later = new Date(Date.now() + 1000 + TIMING.bucketMs * 2 + TIMING.graceMs);
  expect((await other.claim(later, 60000, 10)).filter((doc) => doc._id === orphan._id)).toHaveLength(1);
});

/** A retry of `docs`, due, with their log documents naming it, claimed by `store`. */
async function claimedRetry(store: TdbStore, tenantId: string, docs: TdbSubmissionDoc[]) {
  const job = retryOf(tenantId, docs, 1, new Date(Date.now() - 10));
  await store.queueRetry(job);
  await store.record(docs.map((doc) => ({ ...doc, batchId: job._id })));
  const [claimed] = (await store.claim(new Date(), 60000, 10)).filter((doc) => doc._id === job._id);
  expect(claimed).toBeDefined();
  return claimed!;
}

it("records a retry's refusal holding a NUL character without it, and the same outcomes written again add no attempt", async () => {
  const store = new TdbStore(db, TIMING);
  const claimed = await claimedRetry(
    store,
    'ten_m',
    ['M1', 'M2'].map((id) => logDoc(id, 'ten_m')),
  );
  const attempt = { at: new Date(), durationMs: 5, batchSize: 2, statusCode: 422 };
  const outcomes: Outcomes = [
    { id: 'M1', outcome: { state: 'failed', rejection: { 'decision\u0000_facts': ['Too\u0000 long.'] } } },
    { id: 'M2', outcome: { state: 'pending', dueAt: new Date(Date.now() + 60000) }, error: 'batch_refused' },
  ];
  await store.recordOutcomes(claimed, attempt, outcomes);
  await store.recordOutcomes(claimed, attempt, outcomes);
  const after = new Map((await store.submissions.find({ tenantId: 'ten_m' }).toArray()).map((doc) => [doc._id, doc]));
  expect(after.get('M1')).toMatchObject({
    state: 'failed',
    rejection: { decision_facts: ['Too long.'] },
    attemptCount: 1,
  });
  expect(after.get('M1')?.attempts).toHaveLength(1);
  expect(after.get('M2')).toMatchObject({ state: 'pending', attemptCount: 1, lastError: 'batch_refused' });
  expect(after.get('M2')?.attempts).toHaveLength(1);
});

it("records the outcomes of a call's hundred statements, and the store answers after it", async () => {
  // FerretDB stops answering for good when one command carries about 50 update statements: they go a few at a time.
  // Were they one command, the store would hang here and the test fail at its own time-out.
  const store = new TdbStore(db, TIMING);
  await store.ensureIndexes();
  const docs = Array.from({ length: 100 }, (_, index) => logDoc(`H${index}`, 'ten_h'));
  const claimed = await claimedRetry(store, 'ten_h', docs);
  const attempt = { at: new Date(), durationMs: 5, batchSize: 100, statusCode: 201 };
  const outcomes: Outcomes = docs.map((doc) => ({ id: doc._id, outcome: { state: 'submitted' } }));
  await store.recordOutcomes(claimed, attempt, outcomes);
  expect((await db.command({ ping: 1 })).ok).toBe(1);
  expect(await store.submissions.countDocuments({ tenantId: 'ten_h', state: 'submitted' })).toBe(100);
}, 30000);
