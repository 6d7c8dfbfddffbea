import type { Collection, Filter } from 'mongodb';
import type { BucketSweeper } from './bucket-sweeper';
import type { DueQueueTiming, QueuedDoc } from './queued-doc';

/**
 * Where a queue's jobs wait: the time bucket of a due time or a lease end, and the move that keeps a job written late
 * where every process still reads. Shared by the queue's inserts, claims and finishes (see DueQueue).
 */
export class JobBuckets {
  constructor(
    private readonly jobs: Collection<QueuedDoc>,
    private readonly sweeper: BucketSweeper,
    private readonly name: string,
    private readonly timing: DueQueueTiming,
  ) {}

  bucket(at: Date | number): number {
    return this.sweeper.bucket(at);
  }

  /** The scheduling fields of a job due at `dueAt` (pending). */
  pendingFields(dueAt: Date): { state: 'pending'; dueAt: Date; due: string } {
    // A due time in the past goes in the current bucket: the sweep may have passed older ones already.
    return { state: 'pending', dueAt, due: String(this.bucket(Math.max(dueAt.getTime(), Date.now()))) };
  }

  /**
   * A write outside the queue (a manual retry, a replay, another process's insert) put the jobs `filter` names in bucket
   * `due` (from `pendingFields`): this process reads it again at its next claim, and they are kept findable by every
   * process (see keepFindable).
   */
  async written(due: string, filter: Filter<QueuedDoc>): Promise<void> {
    this.sweeper.readAgain(Number(due));
    await this.moveIfSwept(Number(due), filter);
  }

  /**
   * Jobs written by this process, pending or leased, whose write was answered only once other processes may have
   * swept their bucket for the last time (a write that waited on a slow store past the bucket's end and the grace) go
   * to the current bucket, which every process still reads. Otherwise only this process would know of them, and one
   * that stops before it works them would leave them where no process reads again. The documents given follow the
   * move.
   *
   * A move that fails (it may have run or not) is reported and returned, never thrown: the jobs stay candidates here,
   * and their bucket is swept by this process until a read finds it empty. The write before it stands; its caller
   * decides whether to go on (see DueQueue.insertMany).
   */
  async keepFindable(docs: QueuedDoc[]): Promise<{ failed?: unknown }> {
    let failed: unknown;
    // A leased job too: one stored late under a lease that ran out is taken over from the bucket it is moved to.
    const late = docs.filter(
      (doc): doc is QueuedDoc & { due: string } =>
        (doc.state === 'pending' || doc.state === 'sending') &&
        doc.due !== undefined &&
        this.sweptByOthers(Number(doc.due)),
    );
    for (const due of new Set(late.map((doc) => doc.due))) {
      const list = late.filter((doc) => doc.due === due);
      try {
        const to = await this.moveIfSwept(Number(due), { _id: { $in: list.map((doc) => doc._id) } });
        for (const doc of list) doc.due = String(to);
      } catch (err) {
        failed ??= err;
        for (const doc of list) {
          this.sweeper.remember(doc);
          this.timing.onIncident?.({ queue: this.name, kind: 'move_failed', jobId: doc._id, err });
        }
      }
    }
    return failed === undefined ? {} : { failed };
  }

  /**
   * Moves the jobs `filter` names out of `bucket` while it is one others may have swept; the bucket they end in. Any
   * job still in such a bucket is moved, whatever its state: a leased one is then taken over after its lease, as it
   * would be in the bucket of its lease's end (a racing write on FerretDB v1 can leave a lease with another bucket).
   */
  private async moveIfSwept(bucket: number, filter: Filter<QueuedDoc>): Promise<number> {
    let from = bucket;
    while (this.sweptByOthers(from)) {
      const to = this.bucket(Date.now());
      await this.jobs.updateMany({ ...filter, due: String(from) }, { $set: { due: String(to) } });
      this.sweeper.readAgain(to);
      from = to;
    }
    return from;
  }

  /** Whether other processes may have read the bucket for the last time: its end and the grace are past. */
  sweptByOthers(bucket: number): boolean {
    return Date.now() >= (bucket + 1) * this.timing.bucketMs + this.timing.graceMs;
  }
}
