import { insertUnlessExists } from '@vigil/proto/platform';

/** A claim on a piece of work: its key, and when its claimant made it. */
interface Claim {
  _id: string;
  at: Date;
}

/** The calls of a claims collection a chain makes (a driver `Collection` satisfies it). */
interface ClaimsCollection<T extends Claim> {
  insertOne(doc: T): Promise<unknown>;
  findOne(filter: { _id: string }): Promise<T | null>;
}

export interface ClaimChain<T extends Claim> {
  /** The chain's key at `step`: step 0 is the work's own claim key, each later one the claim after a dead one. */
  key: (step: number) => string;
  /** The claim's other fields. */
  fields: Omit<T, '_id' | 'at'>;
  /** When this claim is made (read before `unrecorded` is asked, so a claim older than the lease by it was dead). */
  now: Date;
  /** How long a claimant has to record its claim on the work, milliseconds. */
  leaseMs: number;
  /** Keys the chain has at most (an attempt each); unbounded when absent. */
  steps?: number;
  /** True while the work is as the caller read it: no claimant recorded a claim on it since. */
  unrecorded: () => Promise<boolean>;
}

/** This call holds the work (`deadClaims`: the claims it passed, whose claimants never recorded them); or it does not. */
export type ChainClaim = { won: true; deadClaims: number } | { won: false; spent: boolean };

/**
 * Claims a piece of work by a unique insert of its key, taking over a claim whose claimant died before recording it.
 *
 * A claimant inserts its key, then records the claim on the work (two writes: FerretDB v1 has no atomic conditional
 * update, so exclusivity comes from the insert). If the insert's reply is lost, or the record fails, or the process dies
 * between them, the key stays and the work looks unclaimed: its key alone would refuse every later claimant. So a key
 * that exists, is older than the lease, and whose work is still unrecorded belonged to a dead claimant: the next key
 * in the chain is claimed instead. Every taker of one dead claim races for the same next key, so one wins; a fresh key
 * is a live claimant's, and stops the walk.
 */
export async function claimInChain<T extends Claim>(
  claims: ClaimsCollection<T>,
  chain: ClaimChain<T>,
): Promise<ChainClaim> {
  const { key, fields, now, leaseMs, steps = Number.POSITIVE_INFINITY, unrecorded } = chain;
  for (let step = 0; step < steps; step += 1) {
    const _id = key(step);
    if (await insertUnlessExists(claims, { ...fields, _id, at: now } as T)) return { won: true, deadClaims: step };
    const held = await claims.findOne({ _id });
    // Gone since the insert (the work was deleted with its claims) or made within the lease: not this caller's.
    if (!held || held.at.getTime() > now.getTime() - leaseMs) return { won: false, spent: false };
    if (!(await unrecorded())) return { won: false, spent: false };
  }
  return { won: false, spent: true };
}
