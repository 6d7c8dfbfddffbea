import { COLLECTIONS } from '@vigil/proto';
import { insertUnlessExists } from '@vigil/proto/platform';
import type { Collection, Db } from 'mongodb';
import { claimInChain } from '../../store/claim-chain';
import { guarded } from '../../store/mongo-errors';

type RetroPassState = 'queued' | 'running' | 'succeeded' | 'failed';
/** What started a pass: hashes added (one by one or imported), or a hash enabled or reconfirmed again. */
export type RetroTrigger = 'added' | 'enabled' | 'confirmed';
/** Why a pass failed: each of its attempts stopped (a store outage, a failure matching a record, a runner lost). */
export type RetroFailure = 'too_many_attempts';

export interface RetroPassCounts {
  /** Records whose stored image hashes were compared. */
  scanned: number;
  /** Records an image of which is within the bank's distance of one of the pass's hashes. */
  matched: number;
  /** Records the pass flagged, or to whose flag it added the bank's reason. */
  flagged: number;
  /** Records left as a person decided them. */
  heldByHumans: number;
}

const zeroRetroCounts = (): RetroPassCounts => ({ scanned: 0, matched: 0, flagged: 0, heldByHumans: 0 });

export interface RetroPassDoc {
  _id: string;
  tenantId: string;
  bankId: string;
  trigger: RetroTrigger;
  /** The hashes to match, by id: never a hash value, so that a withdrawal leaves no copy here. */
  hashIds: string[];
  /** The change that wrote them (`hash_bank_changes`): they are read by it in one query. */
  change?: string;
  /** True until the pass ends: the one field runners look for passes by. */
  open: boolean;
  state: RetroPassState;
  /** The attempt running it (each claimed by a unique insert); 0 while queued. */
  attempt: number;
  /** The next bucket of record hashes to read (record-hash-store.ts): a resumed attempt starts there. */
  bucket: number;
  counts: RetroPassCounts;
  /** The counts when `bucket` began: a resumed attempt reads that bucket again from its start. */
  bucketCounts: RetroPassCounts;
  createdAt: Date;
  startedAt?: Date;
  /** Written with each progress write: a runner silent for the lease is taken over. */
  heartbeatAt?: Date;
  finishedAt?: Date;
  error?: RetroFailure;
}

interface ClaimDoc {
  _id: string;
  passId: string;
  at: Date;
}

/** Passes of a bank kept once ended (the newest), so that what a bank shows does not grow with its history. */
const KEPT_PER_BANK = 5;

/** A pass as it is asked for, before it is queued. */
type NewRetroPass = Omit<RetroPassDoc, 'open' | 'state' | 'attempt' | 'bucket' | 'counts' | 'bucketCounts'>;

/** A pass as it is queued: open, not begun, nothing counted. */
export function queuedPass(pass: NewRetroPass): RetroPassDoc {
  return {
    ...pass,
    open: true,
    state: 'queued',
    attempt: 0,
    bucket: 0,
    counts: zeroRetroCounts(),
    bucketCounts: zeroRetroCounts(),
  };
}

/**
 * The retroactive passes (`hash_retro_passes`) and their claims (`hash_retro_claims`). A pass is claimed attempt by
 * attempt through a unique insert of `<passId>#<attempt>` (conditional updates are not atomic on FerretDB v1), so two
 * moderators never both hold one attempt; a holder that finds a later attempt on the pass stops. A claim that its
 * runner never recorded on the pass is taken over after the lease (claim-chain.ts). Runners select passes
 * by equality on `open`, and a bank's passes by `bankId`: the filters FerretDB takes to an index.
 */
export class RetroPassStore {
  private readonly passes: Collection<RetroPassDoc>;
  private readonly claims: Collection<ClaimDoc>;

  constructor(
    db: Db,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.passes = db.collection(COLLECTIONS.hashRetroPasses);
    this.claims = db.collection(COLLECTIONS.hashRetroClaims);
  }

  async ensureIndexes(): Promise<void> {
    await guarded(() => this.passes.createIndex({ open: 1 }, { name: 'open' }));
    await guarded(() => this.passes.createIndex({ bankId: 1 }, { name: 'bank' }));
    await guarded(() => this.claims.createIndex({ passId: 1 }, { name: 'pass' }));
  }

  /** Queues a pass; the bank's ended passes beyond the newest few are forgotten. */
  async create(pass: NewRetroPass) {
    const doc = queuedPass(pass);
    // A retried insert that landed before finds itself: the same pass.
    await guarded(() => insertUnlessExists(this.passes, doc));
    const ended = (await this.ofBank(pass.bankId)).filter((other) => !other.open).slice(KEPT_PER_BANK);
    for (const old of ended) {
      await guarded(() => this.passes.deleteOne({ _id: old._id }));
      await guarded(() => this.claims.deleteMany({ passId: old._id }));
    }
    return doc;
  }

  /** Passes not ended, oldest first. */
  async openPasses(): Promise<RetroPassDoc[]> {
    const open = await guarded(() => this.passes.find({ open: true }).toArray());
    return open.sort((a, b) => (a._id < b._id ? -1 : 1));
  }

  /** A bank's passes, newest first (a few: see KEPT_PER_BANK). */
  async ofBank(bankId: string): Promise<RetroPassDoc[]> {
    const passes = await guarded(() => this.passes.find({ bankId }).toArray());
    return passes.sort((a, b) => (a._id < b._id ? 1 : -1));
  }

  get(passId: string): Promise<RetroPassDoc | null> {
    return guarded(() => this.passes.findOne({ _id: passId }));
  }

  /**
   * Takes the pass's next attempt (`pass.attempt + 1`) and records it on the pass; `held` when another runner holds it,
   * `spent` when no attempt is left. An attempt whose claim was stored but never recorded on the pass (the claim's
   * reply lost, the record failed, the runner died between the two) is dead once older than the lease: the attempt
   * after it is claimed instead, and counts it (`deadClaims`).
   */
  async claim(
    pass: RetroPassDoc,
    limits: { leaseMs: number; maxAttempts: number },
  ): Promise<{ attempt: number; deadClaims: number } | 'held' | 'spent'> {
    const now = this.now();
    const first = pass.attempt + 1;
    const claimed = await guarded(() =>
      claimInChain(this.claims, {
        key: (step) => `${pass._id}#${first + step}`,
        fields: { passId: pass._id },
        now,
        leaseMs: limits.leaseMs,
        steps: limits.maxAttempts - pass.attempt,
        unrecorded: async () => {
          const current = await this.get(pass._id);
          return current?.open === true && current.attempt === pass.attempt;
        },
      }),
    );
    if (!claimed.won) return claimed.spent ? 'spent' : 'held';
    const attempt = first + claimed.deadClaims;
    await guarded(() =>
      this.passes.updateOne(
        { _id: pass._id, open: true },
        { $set: { state: 'running', attempt, startedAt: pass.startedAt ?? now, heartbeatAt: now } },
      ),
    );
    return { attempt, deadClaims: claimed.deadClaims };
  }

  /**
   * Stores progress (also the holder's heartbeat); false, writing nothing, when a later attempt took the pass over.
   * The read and the write are two commands: a takeover between them leaves the counts of two attempts mixed for a
   * moment, never a record acted on twice (each record's command id is the pass's).
   */
  async progress(
    passId: string,
    attempt: number,
    progress: Pick<RetroPassDoc, 'bucket' | 'counts' | 'bucketCounts'>,
  ): Promise<boolean> {
    const pass = await this.get(passId);
    if (!pass || pass.attempt !== attempt || !pass.open) return false;
    await guarded(() =>
      this.passes.updateOne({ _id: passId, attempt }, { $set: { ...progress, heartbeatAt: this.now() } }),
    );
    return true;
  }

  /** Lets the pass go at once (a runner stopping): the next runner takes it over without waiting for the lease. */
  async release(passId: string, attempt: number): Promise<void> {
    await guarded(() => this.passes.updateOne({ _id: passId, attempt }, { $set: { heartbeatAt: new Date(0) } }));
  }

  async finish(
    passId: string,
    attempt: number,
    state: 'succeeded' | 'failed',
    outcome: { counts?: RetroPassCounts; error?: RetroFailure } = {},
  ): Promise<void> {
    const now = this.now();
    await guarded(() =>
      this.passes.updateOne(
        { _id: passId, attempt },
        { $set: { state, open: false, finishedAt: now, heartbeatAt: now, ...outcome } },
      ),
    );
  }
}
