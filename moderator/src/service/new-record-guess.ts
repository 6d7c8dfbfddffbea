import type { RuleSet } from '@vigil/proto/rules';
import type { ModerateInput } from './moderate-input';

/** Strategies that judge text in this process, without a call to a provider (which a second judgement would repeat). */
const IN_PROCESS_STRATEGIES: ReadonlySet<string> = new Set(['blocklist', 'patterns', 'links', 'pii']);
const inProcess = new WeakMap<RuleSet, boolean>();

/** Whether every enabled strategy of the rule set judges text in this process (cached per rule set). */
function judgedInProcess(rules: RuleSet): boolean {
  let known = inProcess.get(rules);
  if (known === undefined) {
    known = rules.rules.every(
      (rule) => rule.enabled === false || rule.strategies.every((strategy) => IN_PROCESS_STRATEGIES.has(strategy.type)),
    );
    inProcess.set(rules, known);
  }
  return known;
}

/**
 * Whether a moderation may assume its record is new (`MODERATE_ASSUME_NEW`): only where judging again after a wrong
 * guess costs less than the read it saves, a record without images under live rules that all judge in the process.
 * With a user, a decision that would move the user's flagged count, or change an existing user's data, reads the
 * record first (see `decide` in moderate.ts), so a wrong guess never writes a count or the user's data.
 */
function worthGuessing(input: Pick<ModerateInput, 'content'>, liveRules: RuleSet): boolean {
  return !input.content.imageUrls?.length && judgedInProcess(liveRules);
}

/**
 * A record's key in SeenRecords: 30 bits of its id, whose hex is a SHA-256 of (tenant, clientId), so any bits will do.
 * 30 bits stay a small integer in V8, stored in a Set without a heap number each. Two records that share a key cost
 * only the read a guess would have saved (1 in 10,000 at 100,000 keys).
 */
function keyOf(recordId: string): number {
  return Number.parseInt(recordId.slice(-8), 16) >>> 2;
}

/**
 * The records this process moderated lately, by key (see keyOf): at most `bound` keys, the last `bound / 2` at least.
 * Two generations: when the newer holds half the bound, the older is dropped and the newer takes its place. About 28
 * bytes a key (2.8 MB of heap at 100,000 keys, measured on Node 20; `lru-cache` with the same keys took 9.2 MB). A
 * key it forgets costs at most one wrong guess, which MissValve bounds.
 */
export class SeenRecords {
  private newer = new Set<number>();
  private older = new Set<number>();

  constructor(private readonly bound: number) {}

  has(recordId: string): boolean {
    const key = keyOf(recordId);
    return this.newer.has(key) || this.older.has(key);
  }

  add(recordId: string): void {
    const key = keyOf(recordId);
    if (this.newer.has(key)) return;
    this.newer.add(key);
    if (this.newer.size * 2 >= this.bound) {
      this.older = this.newer;
      this.newer = new Set();
    }
  }

  /** Keys held, for the bound's test. */
  get size(): number {
    return this.newer.size + this.older.size;
  }
}

/**
 * Whether recent guesses were mostly right: the last `window` records that were candidates (worth guessing, not seen),
 * each either new or found to exist. While more than `maxMissRate` of them existed, guesses pause. A record moderated
 * during the pause is read as usual, and that read tells whether a guess would have been right: so the window keeps
 * sliding at no cost, and guesses resume once most candidates are new again, without a probe or a timer. Until
 * `minObserved` records are known, guesses are made.
 */
export class MissValve {
  /** 1 for a record that existed (a wrong guess), 0 for a new one, in a ring. */
  private readonly outcomes: Uint8Array;
  private next = 0;
  private observed = 0;
  private misses = 0;

  constructor(
    private readonly window: number,
    private readonly minObserved: number,
    private readonly maxMissRate: number,
  ) {
    this.outcomes = new Uint8Array(window);
  }

  /** Whether a guess may be made now. */
  get open(): boolean {
    return this.observed < this.minObserved || this.misses <= this.maxMissRate * this.observed;
  }

  /** A candidate's record turned out to exist already (`existed`), or to be new. */
  record(existed: boolean): void {
    if (this.observed === this.window) this.misses -= this.outcomes[this.next] ?? 0;
    else this.observed += 1;
    const outcome = existed ? 1 : 0;
    this.outcomes[this.next] = outcome;
    this.misses += outcome;
    this.next = (this.next + 1) % this.window;
  }
}

/** Keys SeenRecords holds at most: 100,000 (about 2.8 MB). */
const SEEN_RECORDS = 100_000;
/** Candidates MissValve weighs: the last 100, once 20 are known; guesses pause above 20 % of them existing. */
const VALVE_WINDOW = 100;
const VALVE_MIN_OBSERVED = 20;
const VALVE_MAX_MISS_RATE = 0.2;

/** What a moderation does on its first attempt (see NewRecordGuess.plan). */
export interface GuessPlan {
  /** The record is worth guessing and this process has not seen it: its outcome goes to the valve. */
  candidate: boolean;
  /** The first attempt assumes the record is new and reads nothing. */
  guess: boolean;
}

/** No guess, and nothing to learn: the plan of every moderation when `MODERATE_ASSUME_NEW` is off. */
export const NO_GUESS: GuessPlan = { candidate: false, guess: false };

/**
 * The new-record guess of one process (`MODERATE_ASSUME_NEW`): made for a record worth guessing (worthGuessing) that
 * this process has not moderated lately (SeenRecords), while recent guesses were mostly right (MissValve). Updates of
 * records this process moderated read them as before; updates of others' records (another replica's, or from before a
 * restart) cost a wrong guess each, until the valve pauses guessing.
 */
export class NewRecordGuess {
  private readonly seen: SeenRecords;
  private readonly valve: MissValve;

  constructor(options: { window?: number; minObserved?: number; maxMissRate?: number } = {}) {
    this.seen = new SeenRecords(SEEN_RECORDS);
    this.valve = new MissValve(
      options.window ?? VALVE_WINDOW,
      options.minObserved ?? VALVE_MIN_OBSERVED,
      options.maxMissRate ?? VALVE_MAX_MISS_RATE,
    );
  }

  plan(recordId: string, input: Pick<ModerateInput, 'content'>, liveRules: RuleSet): GuessPlan {
    const candidate = worthGuessing(input, liveRules) && !this.seen.has(recordId);
    return { candidate, guess: candidate && this.valve.open };
  }

  /** What a candidate's moderation learnt: its record existed before it (a wrong guess, made or not), or was new. */
  learnt(recordId: string, existed: boolean): void {
    this.valve.record(existed);
    if (existed) this.seen.add(recordId);
  }

  /** The record exists now: this process moderated it. */
  moderated(recordId: string): void {
    this.seen.add(recordId);
  }
}
