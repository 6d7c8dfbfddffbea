import { FairQueue } from './fair-queue';

/** What a due queue keeps in memory of a job it may claim: enough to choose it, not the job itself. */
export interface Candidate {
  id: string;
  tenantId: string;
  group: string;
  state: 'pending' | 'sending';
  dueAt: number;
  leaseUntil?: number;
  bucket: number;
  /** When it can be claimed: the due time, or the end of the lease someone else holds. */
  readyAt: number;
}

/** How many times its cap a group may hold while the candidates in all fill less than half of theirs. */
const GROUP_STRETCH = 10;

/**
 * The candidates a due queue holds, handed out fairly (FairQueue), within caps in all and per group (an endpoint, a
 * tenant). A candidate a cap refuses stays in the store: its bucket is noted as overflowing for that group, and the
 * queue reads it again, so one group's backlog never closes the queue to the others. While less than half the cap in
 * all is taken, a group may hold GROUP_STRETCH times its own: a large backlog of one group then takes fewer reads of
 * its bucket, and the other half stays for the others.
 */
export class Candidates {
  private readonly fair = new FairQueue<Candidate>();
  private readonly known = new Map<string, Candidate>();
  private readonly perGroup = new Map<string, number>();
  /** Groups a read of a bucket found past the caps, by bucket. */
  private readonly overflowing = new Map<number, Set<string>>();

  constructor(
    private readonly maxTotal: number,
    private readonly maxPerGroup: number,
  ) {}

  /** Candidates ready by `now`. */
  dueCount(now: number): number {
    let n = 0;
    for (const candidate of this.known.values()) if (candidate.readyAt <= now) n += 1;
    return n;
  }

  /**
   * Holds the candidate, in place of an older view of the same job; false when a cap left it in the store (noted as
   * overflowing its bucket).
   */
  keep(candidate: Candidate): boolean {
    const existing = this.known.get(candidate.id);
    if (existing) {
      if (existing.readyAt === candidate.readyAt && existing.state === candidate.state) return true;
      this.forget(existing);
    }
    if (this.restore(candidate)) return true;
    const groups = this.overflowing.get(candidate.bucket) ?? new Set<string>();
    groups.add(candidate.group);
    this.overflowing.set(candidate.bucket, groups);
    return false;
  }

  /** Holds a candidate taken out earlier (a claim that failed) unless a cap is reached; false when it was not. */
  restore(candidate: Candidate): boolean {
    if (this.known.has(candidate.id)) return true;
    const inGroup = this.perGroup.get(candidate.group) ?? 0;
    if (this.known.size >= this.maxTotal || inGroup >= this.groupCap()) return false;
    this.known.set(candidate.id, candidate);
    this.perGroup.set(candidate.group, inGroup + 1);
    this.fair.push(candidate.tenantId, candidate.group, candidate);
    return true;
  }

  /**
   * Whether a new read of the bucket can add candidates: it did not overflow, or there is room in all and one group it
   * overflowed for holds less than half its cap (an overflowing bucket read again at once would bring back the same).
   */
  wantsRead(bucket: number): boolean {
    const groups = this.overflowing.get(bucket);
    if (!groups || groups.size === 0) return true;
    if (this.known.size >= this.maxTotal) return false;
    for (const group of groups) if ((this.perGroup.get(group) ?? 0) < this.groupCap() / 2) return true;
    return false;
  }

  private groupCap(): number {
    return this.known.size < this.maxTotal / 2 ? this.maxPerGroup * GROUP_STRETCH : this.maxPerGroup;
  }

  forget(candidate: Candidate): void {
    if (this.known.get(candidate.id) !== candidate) return;
    this.known.delete(candidate.id);
    this.fair.remove(candidate.tenantId, candidate.group, candidate);
    const left = (this.perGroup.get(candidate.group) ?? 1) - 1;
    if (left <= 0) this.perGroup.delete(candidate.group);
    else this.perGroup.set(candidate.group, left);
  }

  /** Takes up to `limit` candidates ready by `now`, fairly, within `capacity(group)` each (see FairQueue.take). */
  take(limit: number, now: number, capacity?: (group: string) => number): Candidate[] {
    const taken = this.fair.take(limit, now, capacity);
    for (const candidate of taken) this.forget(candidate);
    return taken;
  }

  /** Every group with its candidates, as they are now (a copy: the caller may forget them meanwhile). */
  groups(): Array<[string, readonly Candidate[]]> {
    return [...this.fair.groups()].map(([group, list]) => [group, [...list]]);
  }

  /** The buckets that held jobs of a group past the caps, with those groups (as noted since the last `read`). */
  overflow(): ReadonlyMap<number, ReadonlySet<string>> {
    return this.overflowing;
  }

  /** A new read of the bucket (or its jobs moved): what overflowed it before no longer holds. */
  read(bucket: number, group?: string): void {
    if (group === undefined) this.overflowing.delete(bucket);
    else this.overflowing.get(bucket)?.delete(group);
  }
}
