import { BACKTEST_LIMITS, type BacktestResult, type RecordStatus, type UserStatus } from '@vigil/proto';

/** One stored record as the candidate rule set judged it. */
export interface JudgedRecord {
  recordId: string;
  userId?: string;
  /** The stored status (undefined: never moderated, counted as Compliant). */
  current?: RecordStatus;
  /** A human decided the stored status: automation leaves it, and it is the reference the candidate is compared with. */
  manual: boolean;
  candidate: { status: RecordStatus; reasons: string[]; rules: string[] };
}

/** A user moved by the candidate, as stored now. */
export interface UserNow {
  userId: string;
  /** Flagged, not deleted records now. */
  flaggedCount: number;
  status?: UserStatus;
  manual: boolean;
  protected: boolean;
}

type Example = { recordId: string; reasons: string[] };
const example = (record: JudgedRecord): Example => ({
  recordId: record.recordId,
  reasons: record.candidate.reasons.slice(0, BACKTEST_LIMITS.exampleReasons),
});
const keep = (list: Example[], record: JudgedRecord) => {
  if (list.length < BACKTEST_LIMITS.examples) list.push(example(record));
};

/**
 * The counts of a backtest as records are judged: pure and bounded (examples, users). Changes count only records
 * whose status automation may change: a human decision is sticky, so a record a human decided stays as it is (counted
 * in `heldByHumans` when the candidate differs) and is the reference for the agreement figures.
 */
export class BacktestTally {
  private judged = 0;
  private readonly skipped = { passthrough: 0, gone: 0 };
  private readonly changes = {
    toFlagged: 0,
    toCompliant: 0,
    heldByHumans: 0,
    toFlaggedExamples: [] as Example[],
    toCompliantExamples: [] as Example[],
  };
  private readonly rules = new Map<
    string,
    { flags: number; examples: Example[]; humanConfirmed: number; humanOverturned: number }
  >();
  private readonly humans = { reviewed: 0, agree: 0, disagree: 0 };
  /** Per user, how many more (or fewer) of their records would be Flagged. */
  private readonly deltas = new Map<string, number>();

  constructor(ruleIds: readonly string[]) {
    for (const ruleId of ruleIds)
      this.rules.set(ruleId, { flags: 0, examples: [], humanConfirmed: 0, humanOverturned: 0 });
  }

  skip(kind: 'passthrough' | 'gone'): void {
    this.skipped[kind] += 1;
  }

  add(record: JudgedRecord): void {
    this.judged += 1;
    const { candidate } = record;
    const current = record.current ?? 'Compliant';
    for (const ruleId of candidate.rules) {
      const rule = this.rules.get(ruleId);
      if (!rule) continue;
      rule.flags += 1;
      if (rule.examples.length < BACKTEST_LIMITS.examples) rule.examples.push(example(record));
      if (record.manual) {
        if (current === 'Flagged') rule.humanConfirmed += 1;
        else rule.humanOverturned += 1;
      }
    }
    if (record.manual) {
      this.humans.reviewed += 1;
      if (candidate.status === current) this.humans.agree += 1;
      else {
        this.humans.disagree += 1;
        this.changes.heldByHumans += 1;
      }
      return;
    }
    if (candidate.status === current) return;
    const delta = candidate.status === 'Flagged' ? 1 : -1;
    if (delta > 0) {
      this.changes.toFlagged += 1;
      keep(this.changes.toFlaggedExamples, record);
    } else {
      this.changes.toCompliant += 1;
      keep(this.changes.toCompliantExamples, record);
    }
    if (record.userId) this.deltas.set(record.userId, (this.deltas.get(record.userId) ?? 0) + delta);
  }

  /** Users whose flagged count would move, at most `max` (the ones looked up); `more`: others moved too. */
  movedUsers(max: number = BACKTEST_LIMITS.usersLookedUp): { moved: Map<string, number>; more: boolean } {
    const moved = new Map<string, number>();
    let more = false;
    for (const [userId, delta] of this.deltas) {
      if (delta === 0) continue;
      if (moved.size >= max) {
        more = true;
        break;
      }
      moved.set(userId, delta);
    }
    return { moved, more };
  }

  result(input: {
    truncated: boolean;
    threshold: number;
    users: readonly UserNow[];
    usersMore: boolean;
    ai: BacktestResult['ai'];
  }): BacktestResult {
    const wouldSuspend: string[] = [];
    const wouldReinstate: string[] = [];
    let listedAll = true;
    for (const user of input.users) {
      const after = user.flaggedCount + (this.deltas.get(user.userId) ?? 0);
      const automatic = !user.manual && !user.protected;
      const list =
        automatic && user.status !== 'Suspended' && user.status !== 'Banned'
          ? user.flaggedCount < input.threshold && after >= input.threshold
            ? wouldSuspend
            : undefined
          : automatic && user.status === 'Suspended' && user.flaggedCount >= input.threshold && after < input.threshold
            ? wouldReinstate
            : undefined;
      if (!list) continue;
      if (list.length < BACKTEST_LIMITS.usersListed) list.push(user.userId);
      else listedAll = false;
    }
    return {
      judged: this.judged,
      skipped: { ...this.skipped },
      truncated: input.truncated,
      changes: { ...this.changes },
      rules: [...this.rules].map(([ruleId, rule]) => ({ ruleId, ...rule })),
      users: {
        threshold: input.threshold,
        wouldSuspend,
        wouldReinstate,
        truncated: input.usersMore || !listedAll,
      },
      humans: { ...this.humans },
      ai: input.ai,
    };
  }
}
