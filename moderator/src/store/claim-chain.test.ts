import { claimInChain, type ClaimChain } from './claim-chain';
import { MemoryClaims } from './testing/memory-claims';

type ClaimDoc = { _id: string; of: string; at: Date };

const NOW = new Date('2026-01-01T00:10:00Z');
const LEASE_MS = 60_000;
const OLD = new Date(NOW.getTime() - LEASE_MS - 1);
const FRESH = new Date(NOW.getTime() - LEASE_MS + 1);

function chain(over: Partial<ClaimChain<ClaimDoc>> = {}): ClaimChain<ClaimDoc> {
  return {
    key: (step) => (step === 0 ? 'job@1' : `job@1#${step}`),
    fields: { of: 'job' },
    now: NOW,
    leaseMs: LEASE_MS,
    unrecorded: () => Promise.resolve(true),
    ...over,
  };
}

function claimsWith(held: Record<string, Date>): MemoryClaims<ClaimDoc> {
  const claims = new MemoryClaims<ClaimDoc>();
  for (const [_id, at] of Object.entries(held)) claims.docs.set(_id, { _id, of: 'job', at });
  return claims;
}

describe('claimInChain', () => {
  it.each([
    ['wins a free key at step 0', {}, true, { won: true, deadClaims: 0 }, ['job@1']],
    ['leaves a key made within the lease to its claimant', { 'job@1': FRESH }, true, { won: false, spent: false }, []],
    [
      'takes over a key older than the lease whose work is unrecorded, with the next key',
      { 'job@1': OLD },
      true,
      { won: true, deadClaims: 1 },
      ['job@1#1'],
    ],
    [
      'leaves a key older than the lease whose work was recorded since (a stale candidate)',
      { 'job@1': OLD },
      false,
      { won: false, spent: false },
      [],
    ],
    [
      'walks a chain of dead claims to its end',
      { 'job@1': OLD, 'job@1#1': OLD, 'job@1#2': OLD },
      true,
      { won: true, deadClaims: 3 },
      ['job@1#3'],
    ],
    ['stops at a live claim in the chain', { 'job@1': OLD, 'job@1#1': FRESH }, true, { won: false, spent: false }, []],
  ])('%s', async (_name, held, unrecorded, expected, made) => {
    const claims = claimsWith(held);
    const result = await claimInChain(claims, chain({ unrecorded: () => Promise.resolve(unrecorded) }));
    expect(result).toEqual(expected);
    const madeNow = [...claims.docs.values()].filter((doc) => doc.at.getTime() === NOW.getTime());
    expect(madeNow.map((doc) => doc._id)).toEqual(made);
  });

  it('is spent when every key of a bounded chain was dead, and makes none past it', async () => {
    const claims = claimsWith({ 'job@1': OLD, 'job@1#1': OLD });
    await expect(claimInChain(claims, chain({ steps: 2 }))).resolves.toEqual({ won: false, spent: true });
    expect([...claims.docs.keys()]).toEqual(['job@1', 'job@1#1']);
  });

  it('never counts an insert whose reply was lost as won, and takes its key over after the lease', async () => {
    const claims = new MemoryClaims<ClaimDoc>();
    claims.loseNextReply();
    await expect(claimInChain(claims, chain())).rejects.toThrow('reply lost');
    await expect(claimInChain(claims, chain())).resolves.toEqual({ won: false, spent: false });
    claims.age('job@1', LEASE_MS + 1, NOW);
    await expect(claimInChain(claims, chain())).resolves.toEqual({ won: true, deadClaims: 1 });
  });

  it('lets one of two takers of a dead claim win', async () => {
    const claims = claimsWith({ 'job@1': OLD });
    const results = await Promise.all([claimInChain(claims, chain()), claimInChain(claims, chain())]);
    expect(results.filter((result) => result.won)).toHaveLength(1);
    expect([...claims.docs.keys()]).toEqual(['job@1', 'job@1#1']);
  });
});
