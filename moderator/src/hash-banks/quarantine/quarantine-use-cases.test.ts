import type { HashMatchRecord } from '@vigil/proto';
import { NotFoundError, UnavailableError } from '../../domain/errors';
import type { HashDoc } from '../hash-bank-store';
import type { HeldOutcome } from './apply-held-match';
import type { HeldMatchDoc, QuarantineDoc } from './quarantine-store';
import { QuarantineUseCases, type QuarantineUseCasesDeps } from './quarantine-use-cases';

const NOW = new Date('2026-03-01T10:00:00Z');

const quarantine = (extra: Partial<QuarantineDoc> = {}): QuarantineDoc => ({
  _id: 'hsh_meme',
  tenantId: 'ten_1',
  bankId: 'bnk_1',
  bankName: 'Memes',
  kind: 'pdq',
  n: 1,
  state: 'quarantined',
  threshold: 3,
  windowSeconds: 3600,
  count: 4,
  overflow: 0,
  since: new Date('2026-03-01T09:00:00Z'),
  ...extra,
});

const match: HashMatchRecord = {
  position: 1,
  bankId: 'bnk_1',
  bankName: 'Memes',
  kind: 'pdq',
  distance: 0,
  hashId: 'hsh_meme',
  metadata: {},
  action: 'flag',
  quarantined: true,
};

const held = (recordId: string): HeldMatchDoc => ({
  _id: `hsh_meme#${recordId}#1`,
  tenantId: 'ten_1',
  hashId: 'hsh_meme',
  recordId,
  n: 1,
  match,
  at: NOW,
});

function setup(doc: QuarantineDoc | null, outcomes: Record<string, HeldOutcome | Error> = {}) {
  const state = { doc, held: [held('rec_1'), held('rec_2')], disabled: [] as string[], applied: false };
  const applied: { recordId: string; commandId: string }[] = [];
  const deps: QuarantineUseCasesDeps = {
    store: {
      openOf: () => Promise.resolve(state.doc ? [state.doc] : []),
      quarantineOf: () => Promise.resolve(state.doc),
      heldOf: () => Promise.resolve([...state.held]),
      heldCount: () => Promise.resolve(state.held.length),
      dropHeld: (id) => {
        state.held = state.held.filter((doc) => doc._id !== id);
        return Promise.resolve();
      },
      dropAllHeld: () => {
        const n = state.held.length;
        state.held = [];
        return Promise.resolve(n);
      },
      decide: (_hashId, change) => {
        state.doc = { ...state.doc!, ...change };
        return Promise.resolve();
      },
      applied: () => {
        state.doc = { ...state.doc!, applying: false };
        return Promise.resolve();
      },
    },
    banks: {
      updateHash: (_tenantId, _bankId, hashId) => {
        state.disabled.push(hashId);
        return Promise.resolve({} as HashDoc);
      },
      hashesById: () => Promise.resolve([{ _id: 'hsh_meme', metadata: { label: 'meme' } } as unknown as HashDoc]),
    },
    apply: (input) => {
      const outcome = outcomes[input.recordId] ?? 'applied';
      if (outcome instanceof Error) return Promise.reject(outcome);
      applied.push({ recordId: input.recordId, commandId: input.commandId });
      expect(input.match).toEqual(match);
      return Promise.resolve(outcome);
    },
    now: () => NOW,
  };
  return { useCases: new QuarantineUseCases(deps), state, applied };
}

describe('QuarantineUseCases', () => {
  it("lists the tenant's open quarantines with their hash's metadata", async () => {
    const { useCases } = setup(quarantine());
    expect(await useCases.list('ten_1')).toEqual([{ quarantine: quarantine(), metadata: { label: 'meme' }, held: 2 }]);
  });

  it('releases: the hash acts from now on, each held match is applied once by its command id, and dropped', async () => {
    const { useCases, state, applied } = setup(quarantine(), { rec_2: 'manual' });
    expect(await useCases.release('ten_1', 'hsh_meme')).toEqual({ applied: 1, skipped: 1 });
    expect(applied).toEqual([
      { recordId: 'rec_1', commandId: 'release-hsh_meme#rec_1#1-1' },
      { recordId: 'rec_2', commandId: 'release-hsh_meme#rec_2#1-1' },
    ]);
    expect(state.held).toEqual([]);
    expect(state.doc).toMatchObject({ state: 'released', decidedAt: NOW, applying: false });
  });

  it('finishes a release cut short when released again, from the matches still held', async () => {
    const { useCases, state, applied } = setup(quarantine(), { rec_2: new UnavailableError('store down') });
    await expect(useCases.release('ten_1', 'hsh_meme')).rejects.toThrow(UnavailableError);
    expect(state.doc).toMatchObject({ state: 'released', applying: true });
    expect(state.held.map((doc) => doc.recordId)).toEqual(['rec_2']);
    const again = setup(state.doc);
    again.state.held = state.held;
    expect(await again.useCases.release('ten_1', 'hsh_meme')).toEqual({ applied: 1, skipped: 0 });
    expect(applied.map((a) => a.recordId)).toEqual(['rec_1']);
    expect(again.state.doc).toMatchObject({ state: 'released', applying: false, decidedAt: NOW });
  });

  it('dismisses: the held matches are dropped and the hash is disabled in its bank', async () => {
    const { useCases, state, applied } = setup(quarantine());
    expect(await useCases.dismiss('ten_1', 'hsh_meme')).toEqual({ dropped: 2 });
    expect(state.disabled).toEqual(['hsh_meme']);
    expect(applied).toEqual([]);
    expect(state.doc).toMatchObject({ state: 'dismissed', decidedAt: NOW });
  });

  it.each([
    ['no quarantine', null],
    ["another tenant's", quarantine({ tenantId: 'ten_2' })],
    ['a finished release', quarantine({ state: 'released', applying: false })],
    ['a dismissal', quarantine({ state: 'dismissed' })],
  ])('answers not found for %s', async (_name, doc) => {
    const { useCases } = setup(doc);
    await expect(useCases.release('ten_1', 'hsh_meme')).rejects.toThrow(NotFoundError);
    await expect(useCases.dismiss('ten_1', 'hsh_meme')).rejects.toThrow(NotFoundError);
  });
});
