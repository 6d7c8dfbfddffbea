import { type Collection } from 'mongodb';
import { BucketSweeper } from './bucket-sweeper';
import type { DueCursorDoc, QueuedDoc } from './queued-doc';
import { random, SimConnection, SimStore } from './testing/sim-store';

const TIMING = { bucketMs: 10_000, graceMs: 2_000 };
/** Half way into bucket 100. */
const NOW = 100 * TIMING.bucketMs + 5_000;

function setup() {
  const conn = new SimConnection(new SimStore(random(1), { latency: false }));
  const store = { jobs: conn.collection('jobs'), cursors: conn.collection('cursors') };
  const sweeper = () =>
    new BucketSweeper(
      store.jobs as unknown as Collection<QueuedDoc>,
      store.cursors as unknown as Collection<DueCursorDoc>,
      'jobs',
      TIMING,
      (doc) => doc.tenantId,
    );
  return { ...store, sweeper };
}

const job = (id: string, bucket: number, fields: Partial<QueuedDoc> = {}) => ({
  _id: id,
  tenantId: 'ten_1',
  state: 'pending',
  attemptCount: 0,
  dueAt: new Date(bucket * TIMING.bucketMs),
  due: String(bucket),
  updatedAt: new Date(0),
  ...fields,
});

describe('BucketSweeper', () => {
  it('resumes from the saved cursor, reading no bucket before it, and saves where it reached at most once a minute', async () => {
    const { jobs, cursors, sweeper } = setup();
    cursors.docs.set('jobs', { _id: 'jobs', bucket: 98, updatedAt: new Date(0) });
    jobs.docs.set('before', job('before', 97));
    jobs.docs.set('after', job('after', 99));
    const s = sweeper();
    await s.refresh(NOW);
    // Buckets 98 to 100 read at their start, 98 and 99 once more as they are closed.
    expect(s.reads).toBe(5);
    expect(s.take(10, NOW).map((c) => c.id)).toEqual(['after']);
    // Not saved within a minute of the start (bucket 99, which still holds a job, keeps it back in any case).
    expect(cursors.docs.get('jobs')).toMatchObject({ bucket: 98 });
    jobs.docs.delete('after');
    // A minute on, 101 to 106 are opened and 99 to 105 found empty: the cursor moves to 106, not yet confirmed empty.
    await s.refresh(NOW + 60_000);
    expect(cursors.docs.get('jobs')).toMatchObject({ bucket: 106 });
  });

  it('gives the jobs of a release without buckets theirs at the first start, and starts the sweep at the lowest', async () => {
    const { jobs, cursors, sweeper } = setup();
    jobs.docs.set('old', { ...job('old', 90), due: undefined });
    jobs.docs.set('leased', {
      ...job('leased', 95, { state: 'sending', leaseUntil: new Date(96 * TIMING.bucketMs) }),
      due: undefined,
    });
    const s = sweeper();
    await s.refresh(NOW);
    // A pending job goes in its due time's bucket, a leased one in its lease end's.
    expect(jobs.docs.get('old')).toMatchObject({ due: '90' });
    expect(jobs.docs.get('leased')).toMatchObject({ due: '96' });
    expect(cursors.docs.get('jobs')).toMatchObject({ bucket: 90 });
    expect(
      s
        .take(10, NOW)
        .map((c) => c.id)
        .sort(),
    ).toEqual(['leased', 'old']);
  });

  it("moves a group's pending jobs to the bucket of its pause's end, unless the pause is shorter than a bucket", async () => {
    const { jobs, sweeper } = setup();
    jobs.docs.set('long', job('long', 100, { tenantId: 'ten_long' }));
    jobs.docs.set('short', job('short', 100, { tenantId: 'ten_short' }));
    const s = sweeper();
    await s.refresh(NOW);
    const until: Record<string, number> = { ten_long: NOW + 5 * TIMING.bucketMs, ten_short: NOW + 5_000 };
    await s.park(NOW, (group) => until[group]);
    expect(jobs.docs.get('long')).toMatchObject({ due: '105' });
    expect(jobs.docs.get('short')).toMatchObject({ due: '100' });
    expect(s.take(10, NOW).map((c) => c.id)).toEqual(['short']);
  });
});
