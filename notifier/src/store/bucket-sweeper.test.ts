import { type Collection } from 'mongodb';
import { BucketSweeper } from './bucket-sweeper';
import type { DueCursorDoc, Pause, QueuedDoc } from './queued-doc';
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
  return { ...store, sweeper, sim: conn.store };
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

  it('reads a bucket that overflowed the caps again once its group has room, or after a minute', async () => {
    const { jobs, cursors } = setup();
    for (let i = 0; i < 25; i += 1) jobs.docs.set(`job_${i}`, job(`job_${i}`, 99, { dueAt: new Date(NOW - 1_000) }));
    const s = new BucketSweeper(
      jobs as unknown as Collection<QueuedDoc>,
      cursors as unknown as Collection<DueCursorDoc>,
      'jobs',
      // A cap of 2 per group, 20 while less than half the 40 in all are held.
      { ...TIMING, resweepMs: 1_000, maxCandidates: 40, maxPerGroup: 2 },
      (doc) => doc.tenantId,
    );
    cursors.docs.set('jobs', { _id: 'jobs', bucket: 99, updatedAt: new Date(0) });
    await s.refresh(NOW);
    // Documents read: only bucket 99 holds any.
    const found = jobs.found;
    // Past the resweep interval, the group still holds 20: a read would bring back the same.
    await s.refresh(NOW + 1_500);
    expect(jobs.found).toBe(found);
    // Taken down to 9, under half its cap: the bucket is read again.
    expect(s.take(11, NOW + 1_500)).toHaveLength(11);
    await s.refresh(NOW + 2_500);
    expect(jobs.found).toBe(found + 25);
    // Held full again, a read comes a minute after the last at the latest.
    await s.refresh(NOW + 3_500);
    expect(jobs.found).toBe(found + 25);
    await s.refresh(NOW + 63_000);
    expect(jobs.found).toBe(found + 50);
  });

  it("parks a paused group's backlog far ahead, keeping its earliest jobs as probes further apart each time", async () => {
    const { jobs, sweeper } = setup();
    for (let i = 0; i < 5; i += 1) jobs.docs.set(`long_${i}`, job(`long_${i}`, 100, { tenantId: 'ten_long' }));
    jobs.docs.get('long_3')!.dueAt = new Date(99 * TIMING.bucketMs);
    jobs.docs.set('short', job('short', 100, { tenantId: 'ten_short' }));
    const s = sweeper();
    await s.refresh(NOW);
    const pauses: Record<string, Pause> = {
      // A pause of 15 s: probes at its end, then 30 s later, then a minute apart until the backlog's bucket.
      ten_long: { until: NOW + 15_000, backlogUntil: NOW + 200_000, probeEveryMs: 60_000 },
      ten_short: { until: NOW + 5_000, backlogUntil: NOW + 3_600_000, probeEveryMs: 60_000 },
    };
    await s.park(NOW, (group) => pauses[group]);
    // The earliest due first, then by id (the order they were read in).
    expect(jobs.docs.get('long_3')).toMatchObject({ due: '102', parked: true });
    expect(jobs.docs.get('long_0')).toMatchObject({ due: '105', parked: true });
    expect(jobs.docs.get('long_1')).toMatchObject({ due: '111', parked: true });
    expect(jobs.docs.get('long_2')).toMatchObject({ due: '117', parked: true });
    expect(jobs.docs.get('long_4')).toMatchObject({ due: '120', parked: true });
    // A pause shorter than a bucket: the job stays, and is taken when the pause ends.
    expect(jobs.docs.get('short')).toMatchObject({ due: '100' });
    expect(jobs.docs.get('short')!.parked).toBeUndefined();
    expect(s.take(10, NOW).map((c) => c.id)).toEqual(['short']);

    // Jobs of the group read later: one is a probe at the pause's end (those placed before may be gone by then), the
    // others go with the backlog, the later probes being placed already.
    jobs.docs.set('late_1', job('late_1', 100, { tenantId: 'ten_long' }));
    jobs.docs.set('late_2', job('late_2', 100, { tenantId: 'ten_long' }));
    s.readAgain(100);
    await s.refresh(NOW + 1_000);
    await s.park(NOW + 1_000, (group) => pauses[group]);
    expect(jobs.docs.get('late_1')).toMatchObject({ due: '102', parked: true });
    expect(jobs.docs.get('late_2')).toMatchObject({ due: '120', parked: true });
  });

  it("brings a group's parked jobs back to the current bucket when it answers, and tries again when that fails", async () => {
    const { jobs, cursors, sim } = setup();
    jobs.docs.set('a', job('a', 90, { tenantId: 'ten_a', due: '460', parked: true }));
    jobs.docs.set('b', job('b', 91, { tenantId: 'ten_a', due: '106', parked: true }));
    // A park that read it pending wrote over its lease (FerretDB v1 updates read, then write).
    const leaseUntil = new Date(NOW + 5_000);
    jobs.docs.set(
      'leased',
      job('leased', 91, { tenantId: 'ten_a', state: 'sending', leaseUntil, due: '460', parked: true }),
    );
    jobs.docs.set('other', job('other', 90, { tenantId: 'ten_b', due: '460', parked: true }));
    const incidents: string[] = [];
    const s = new BucketSweeper(
      jobs as unknown as Collection<QueuedDoc>,
      cursors as unknown as Collection<DueCursorDoc>,
      'jobs',
      { ...TIMING, onIncident: (incident) => incidents.push(incident.kind) },
      (doc) => doc.tenantId,
    );
    await s.refresh(NOW);
    s.unpark('ten_a');
    sim.faults = { before: 1, lost: 0, partial: 0, spike: 0 };
    await s.unparkAll(NOW);
    expect(incidents).toEqual(['unpark_failed']);
    expect(jobs.docs.get('a')).toMatchObject({ due: '460', parked: true });
    sim.faults = { before: 0, lost: 0, partial: 0, spike: 0 };
    await s.unparkAll(NOW);
    await s.refresh(NOW);
    for (const id of ['a', 'b']) {
      expect(jobs.docs.get(id)).toMatchObject({ due: '100' });
      expect(jobs.docs.get(id)!.parked).toBeUndefined();
    }
    // Only that group's jobs move. The leased one comes back too, and is taken over once its lease is over.
    expect(jobs.docs.get('leased')).toMatchObject({ due: '100', state: 'sending' });
    expect(jobs.docs.get('leased')!.parked).toBeUndefined();
    expect(jobs.docs.get('other')).toMatchObject({ due: '460', parked: true });
    expect(
      s
        .take(10, NOW)
        .map((c) => c.id)
        .sort(),
    ).toEqual(['a', 'b']);
    expect(s.take(10, leaseUntil.getTime()).map((c) => c.id)).toEqual(['leased']);
  });
});
