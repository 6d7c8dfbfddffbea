import { upsertRetried } from '@vigil/proto/platform';
import type { Collection } from 'mongodb';
import { Candidates, type Candidate } from '../queue/candidates';
import type { DueCursorDoc, DueQueueTiming, Pause, QueuedDoc } from './queued-doc';

/**
 * Candidates kept in memory at most, in all and per group; past them, jobs are left in the store and their bucket is
 * read again (a bucket counts as empty only when a read finds nothing), so one group's backlog never closes the queue.
 */
const MAX_CANDIDATES = 100_000;
const MAX_PER_GROUP = 1_000;
/** A closed bucket that still held jobs is swept again after this long. */
const RESWEEP_MS = 5_000;
/**
 * A closed bucket that overflowed the candidate caps is swept again after this long at the latest, while its groups
 * still hold enough candidates (see Candidates.wantsRead): it is read again as soon as they have room.
 */
const OVERFLOW_RESWEEP_MS = 60_000;
/** Cursor writes at most this often (it is a restart hint; buckets before it are known empty). */
const CURSOR_SAVE_MS = 60_000;
/** Buckets read at their start by one refresh at most (a catch-up after downtime continues at the next poll). */
const MAX_OPENED_PER_REFRESH = 60;

/**
 * How a DueQueue finds its due work. A bucket is read when it starts (its jobs are due within one bucket width) and once
 * more after it ended plus a grace (whatever is left: jobs of a crashed worker, a late write), then until a read finds
 * it empty; jobs read are kept as small candidates in memory and handed out fairly between tenants and groups when due.
 * Jobs this process schedules into a bucket it has already read are offered to it directly. So an idle queue reads two
 * empty buckets per bucket width, whatever it holds for later. Where the sweep of closed buckets has reached is saved
 * as a cursor, from which a restart resumes. A paused group's jobs are parked in a later bucket (see `park`).
 */
export class BucketSweeper {
  private readonly candidates: Candidates;
  private readonly sweptAt = new Map<number, number>();
  /** Buckets to read again at the next refresh (a bulk write made jobs due in them). */
  private readonly touched = new Set<number>();
  /** Buckets read at their start and not yet found empty after they closed. */
  private readonly unconfirmed = new Set<number>();
  /** Paused groups' last probe placed by `park`, so that jobs parked later do not place the same probes again. */
  private readonly probesUntil = new Map<string, number>();
  /** Groups that answered, whose parked jobs `unparkAll` brings back. */
  private readonly unparking = new Set<string>();
  /**
   * The buckets each group's parked jobs were brought back to, a try whose reply was lost included, until the caller
   * knows them where every process reads (see `unparkAll`).
   */
  private readonly unparkedTo = new Map<string, Set<number>>();
  private cursor?: number;
  private openedUpTo = -1;
  private savedCursor = -1;
  private savedAt = 0;
  /** Bucket reads made, for tests and metrics. */
  reads = 0;
  private readonly resweepMs: number;

  constructor(
    private readonly jobs: Collection<QueuedDoc>,
    private readonly cursors: Collection<DueCursorDoc>,
    private readonly name: string,
    private readonly timing: DueQueueTiming,
    private readonly groupOf: (doc: QueuedDoc) => string,
    private readonly groupField?: string,
  ) {
    this.resweepMs = timing.resweepMs ?? RESWEEP_MS;
    this.candidates = new Candidates(timing.maxCandidates ?? MAX_CANDIDATES, timing.maxPerGroup ?? MAX_PER_GROUP);
  }

  bucket(at: Date | number): number {
    return Math.floor((typeof at === 'number' ? at : at.getTime()) / this.timing.bucketMs);
  }

  /** Due candidates in memory (the backlog this process knows of), without reading the store. */
  dueCount(now: number): number {
    return this.candidates.dueCount(now);
  }

  /** Takes up to `limit` candidates ready by `now`, fairly, within `capacity(group)` each; they leave memory. */
  take(limit: number, now: number, capacity?: (group: string) => number): Candidate[] {
    return this.candidates.take(limit, now, capacity);
  }

  /** Keeps a candidate `take` gave out again (its claim failed), unless a cap is reached: its bucket is then read. */
  restore(candidate: Candidate): void {
    this.candidates.restore(candidate);
  }

  /** Reads the bucket again at the next refresh, if it has been read by then (a write made jobs due in it). */
  readAgain(bucket: number): void {
    this.touched.add(bucket);
  }

  /** Whether the first refresh has run (see `start`). */
  get started(): boolean {
    return this.cursor !== undefined;
  }

  /** Reads the buckets due for a read: new buckets as they start, closed ones once more (and until found empty). */
  async refresh(now: number): Promise<void> {
    if (this.cursor === undefined) await this.start(now);
    const current = this.bucket(now);
    for (const bucket of [...this.touched]) {
      this.touched.delete(bucket);
      if (bucket <= this.openedUpTo) await this.read(bucket);
    }
    // Catching up after a pause reads each bucket once here, a bounded number per poll so that a claim never waits
    // for a long catch-up; the sweep below confirms them empty.
    let opened = 0;
    while (this.openedUpTo < current && opened++ < MAX_OPENED_PER_REFRESH) {
      this.openedUpTo = Math.max(this.openedUpTo + 1, this.cursor!);
      this.unconfirmed.add(this.openedUpTo);
      await this.read(this.openedUpTo);
    }
    // Closed buckets are swept once more each, then every resweepMs until a read finds them empty, whatever this
    // process holds of them: a job can leave memory without leaving its bucket (a claim or a finish that failed, the
    // candidate caps, another replica's write, a replica that stopped), and this read is what finds it again.
    const lastClosed = this.bucket(now - this.timing.graceMs) - 1;
    for (const bucket of [...this.unconfirmed].sort((a, b) => a - b)) {
      if (bucket > lastClosed) break;
      const swept = this.sweptAt.get(bucket);
      if (swept !== undefined && now - swept < this.resweepMs) continue;
      // A large backlog of one group: read again once that group can take more (each read returns the whole bucket).
      if (swept !== undefined && now - swept < OVERFLOW_RESWEEP_MS && !this.candidates.wantsRead(bucket)) continue;
      this.sweptAt.set(bucket, now);
      if ((await this.read(bucket)) > 0) continue;
      this.sweptAt.delete(bucket);
      this.unconfirmed.delete(bucket);
      this.candidates.read(bucket);
    }
    this.cursor = this.unconfirmed.size > 0 ? Math.min(...this.unconfirmed) : this.openedUpTo + 1;
    if (this.cursor > this.savedCursor && now - this.savedAt >= CURSOR_SAVE_MS) {
      this.savedAt = now;
      this.savedCursor = this.cursor!;
      await upsertRetried(() =>
        this.cursors.updateOne(
          { _id: this.name },
          { $max: { bucket: this.cursor! }, $set: { updatedAt: new Date(now) } },
          { upsert: true },
        ),
      );
    }
  }

  /**
   * The first refresh: resumes from the saved cursor. Without one (a new database, or jobs written by a release that
   * had no buckets) it gives every unfinished job its bucket once, which reads them all this one time.
   */
  async start(now: number): Promise<void> {
    const saved = await this.cursors.findOne({ _id: this.name });
    if (saved) {
      this.cursor = saved.bucket;
    } else {
      // Writers put work in the bucket of their own clock's now at the earliest; grace covers their lag and skew.
      let lowest = this.bucket(now - this.timing.graceMs) - 1;
      for (const state of ['pending', 'sending']) {
        const docs = await this.jobs
          .find({ state }, { projection: { _id: 1, state: 1, dueAt: 1, leaseUntil: 1, due: 1 } })
          .toArray();
        for (const doc of docs) {
          const at = state === 'pending' ? doc.dueAt : (doc.leaseUntil ?? doc.dueAt);
          const bucket = this.bucket(at);
          lowest = Math.min(lowest, bucket);
          if (doc.due === undefined) await this.jobs.updateOne({ _id: doc._id }, { $set: { due: String(bucket) } });
        }
      }
      this.cursor = lowest;
      await upsertRetried(() =>
        this.cursors.updateOne(
          { _id: this.name },
          { $max: { bucket: lowest }, $set: { updatedAt: new Date(now) } },
          { upsert: true },
        ),
      );
    }
    this.openedUpTo = this.cursor - 1;
    this.savedCursor = this.cursor;
    this.savedAt = now;
  }

  /** Reads one bucket by equality and keeps its jobs as candidates; returns how many it held. */
  private async read(bucket: number): Promise<number> {
    this.reads += 1;
    const projection: Record<string, 1> = { _id: 1, tenantId: 1, state: 1, dueAt: 1, leaseUntil: 1, due: 1 };
    if (this.groupField) projection[this.groupField] = 1;
    const docs = await this.jobs.find({ due: String(bucket) }, { projection }).toArray();
    this.candidates.read(bucket);
    for (const doc of docs) this.remember(doc);
    return docs.length;
  }

  /** Takes in a pending job this process just wrote, so that it need not be read back to be found. */
  offer(doc: QueuedDoc): void {
    if (doc.state !== 'pending' || doc.due === undefined) return;
    // Soon-due work is kept here so that it runs on time (a deferral of 200 ms must not wait for the next bucket's
    // read); later work is found when its bucket is read. Reading it again then changes nothing.
    if (
      Number(doc.due) > this.openedUpTo &&
      doc.dueAt.getTime() - Date.now() > this.timing.bucketMs + this.timing.graceMs
    ) {
      return;
    }
    this.remember(doc);
  }

  /** Keeps the job as a candidate (a cap may leave it in the store: its bucket is then read again). */
  remember(doc: QueuedDoc): void {
    if (doc.state !== 'pending' && doc.state !== 'sending') return;
    if (doc.state === 'sending' && !doc.leaseUntil) return;
    const dueAt = doc.dueAt.getTime();
    const leaseUntil = doc.leaseUntil?.getTime();
    const bucket = Number(doc.due ?? this.bucket(dueAt));
    // A job in a bucket already opened (a write that landed late, after its bucket was swept) keeps that bucket swept
    // until it is found empty, whatever becomes of this candidate.
    if (bucket <= this.openedUpTo) this.unconfirmed.add(bucket);
    this.candidates.keep({
      id: doc._id,
      tenantId: doc.tenantId,
      group: this.groupOf(doc),
      state: doc.state,
      dueAt,
      ...(leaseUntil !== undefined ? { leaseUntil } : {}),
      bucket,
      readyAt: doc.state === 'pending' ? dueAt : leaseUntil!,
    });
  }

  /**
   * Parks the pending jobs of paused groups: moves them out of the buckets this process has read, to the bucket of the
   * group's `backlogUntil` (far later), marked `parked`. Before that, a few of them, the earliest due, are moved one by
   * one to buckets from the pause's end on, further apart each time as the breaker's pauses grow, up to `probeEveryMs`
   * (probes): the group is tried about as often as its pauses allow, while its backlog is neither held here nor read
   * again. A group paused for less than a bucket is left as it is. When the group answers, `unpark` brings the whole
   * backlog back at once; if nothing does, each parked job is read again at its bucket (it is never stranded). A job
   * another process leased meanwhile may get the later bucket too (FerretDB v1 updates read then write): it is then
   * found when that bucket is read, its lease long over, and taken over. Returns the probes written, tries that failed
   * included: a write that lands after other processes swept its bucket for the last time must be moved on.
   */
  async park(
    now: number,
    pauseOf: (group: string) => Pause | undefined,
  ): Promise<Array<{ bucket: number; id: string }>> {
    const written: Array<{ bucket: number; id: string }> = [];
    const field = this.groupKey;
    for (const group of [...this.probesUntil.keys()]) if (!pauseOf(group)) this.probesUntil.delete(group);
    const moves = new Map<string, { pause: Pause; buckets: Set<number>; candidates: Candidate[] }>();
    const paused = (group: string) => {
      const pause = pauseOf(group);
      return pause && pause.until - now > this.timing.bucketMs ? pause : undefined;
    };
    for (const [group, candidates] of this.candidates.groups()) {
      const pause = paused(group);
      if (pause === undefined) continue;
      for (const candidate of candidates) {
        if (candidate.state !== 'pending' || candidate.bucket >= this.bucket(pause.until)) continue;
        const move = moves.get(group) ?? { pause, buckets: new Set<number>(), candidates: [] };
        move.buckets.add(candidate.bucket);
        move.candidates.push(candidate);
        moves.set(group, move);
      }
    }
    for (const [bucket, groups] of this.candidates.overflow()) {
      for (const group of groups) {
        const pause = moves.get(group)?.pause ?? paused(group);
        if (pause === undefined || bucket >= this.bucket(pause.until)) continue;
        const move = moves.get(group) ?? { pause, buckets: new Set<number>(), candidates: [] };
        move.buckets.add(bucket);
        moves.set(group, move);
      }
    }
    for (const [group, { pause, buckets, candidates }] of moves) {
      try {
        // The probes first (a failure leaves the rest where they are, read again), spaced as the breaker pauses: at
        // the pause's end, then twice the pause later, doubling up to the longest gap. Probes placed by an earlier
        // park cover their span; one at the pause's end is placed all the same, as those may be gone (taken by
        // another process, or brought back when it saw the group answer).
        const longest = Math.max(pause.probeEveryMs, this.timing.bucketMs);
        const placed = this.probesUntil.get(group) ?? -Infinity;
        let gap = Math.min(longest, Math.max(this.timing.bucketMs, 2 * (pause.until - now)));
        let at = pause.until;
        const earliest = [...candidates].sort((a, b) => a.readyAt - b.readyAt);
        for (const candidate of earliest) {
          if (this.bucket(at) >= this.bucket(pause.backlogUntil)) break;
          written.push({ bucket: this.bucket(at), id: candidate.id });
          await this.jobs.updateOne(
            { _id: candidate.id, due: String(candidate.bucket), state: 'pending' },
            { $set: { due: String(this.bucket(at)), parked: true } },
          );
          this.probesUntil.set(group, Math.max(at, placed));
          this.candidates.forget(candidate);
          at += gap;
          gap = Math.min(longest, 2 * gap);
          if (at <= placed) at = placed + longest;
        }
        const target = String(this.bucket(pause.backlogUntil));
        for (const bucket of buckets) {
          await this.jobs.updateMany(
            { due: String(bucket), [field]: group, state: 'pending' },
            { $set: { due: target, parked: true } },
          );
          this.candidates.read(bucket, group);
        }
        for (const candidate of candidates) this.candidates.forget(candidate);
      } catch (err) {
        this.timing.onIncident?.({ queue: this.name, kind: 'park_failed', err });
      }
    }
    return written;
  }

  /** Brings the group's parked jobs back at the next claim (it answered): see `unparkAll`. */
  unpark(group: string): void {
    this.unparking.add(group);
  }

  /**
   * Moves the parked jobs of the groups that answered to the current bucket, one write per group (by equality on the
   * group and the mark), and reads it again. A write that failed is tried again at the next claim. A leased job can
   * carry the mark too (a park that read it pending wrote over the lease: FerretDB v1 updates read, then write): it
   * comes back as well, and is taken over after its lease instead of waiting for the park's end. Returns the buckets
   * written since the last `unparkFollowed`, tries that failed included (their write may have landed): a long write
   * can land after other processes swept its bucket for the last time, so the caller moves what it finds there on.
   */
  async unparkAll(now: number): Promise<Array<{ bucket: number; group: string }>> {
    const field = this.groupKey;
    for (const group of [...this.unparking]) {
      const current = this.bucket(now);
      const to = this.unparkedTo.get(group) ?? new Set<number>();
      this.unparkedTo.set(group, to.add(current));
      try {
        await this.jobs.updateMany(
          { [field]: group, parked: true },
          { $set: { due: String(current) }, $unset: { parked: '' } },
        );
        this.unparking.delete(group);
        this.probesUntil.delete(group);
        this.readAgain(current);
      } catch (err) {
        this.timing.onIncident?.({ queue: this.name, kind: 'unpark_failed', err });
        break;
      }
    }
    return [...this.unparkedTo].flatMap(([group, buckets]) => [...buckets].map((bucket) => ({ bucket, group })));
  }

  /** The group's jobs brought back to `bucket` are where every process reads (see `unparkAll`). */
  unparkFollowed(bucket: number, group: string): void {
    const to = this.unparkedTo.get(group);
    to?.delete(bucket);
    if (to?.size === 0) this.unparkedTo.delete(group);
  }

  /** The field that holds a job's group. */
  get groupKey(): string {
    return this.groupField ?? 'tenantId';
  }
}
