import { listHashQuarantines } from './list-hash-quarantines';
import { lookupHashes } from './lookup-hashes';
import { updateHashBank } from './update-hash-bank';
import { fakeCaller } from './testing/fake-caller';

const bank = {
  id: 'bnk_1',
  name: 'Known',
  kind: 'pdq',
  distance: 31,
  action: 'flag',
  negative: false,
  enabled: true,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
};

/** A quarantine's window and counts, the same in the moderator's answer and in the view. */
const QUARANTINE_COUNTS = {
  threshold: 3,
  windowSeconds: 60,
  count: 4,
  held: 2,
  overflow: 0,
  since: '2026-01-01T00:00:00.000Z',
};

describe('hash bank use cases', () => {
  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['null removes', { description: null, policy: null }, { clearDescription: true, clearPolicy: true }],
    [
      'values replace',
      { description: 'd', policy: 'p', distance: 10 },
      { description: 'd', clearDescription: false, policyId: 'p', clearPolicy: false, distance: 10 },
    ],
    ['null turns flood quarantine off', { flood: null }, { clearFlood: true, floodThreshold: undefined }],
    [
      'a flood limit replaces',
      { flood: { threshold: 3, windowSeconds: 60 } },
      { clearFlood: false, floodThreshold: 3, floodWindowSeconds: 60 },
    ],
  ])('update: %s', async (_name, patch, sent) => {
    const { caller, calls } = fakeCaller(bank);
    const view = await updateHashBank(caller, 'bnk_1', patch);
    expect(calls[0]?.[0]).toBe('updateHashBank');
    expect(calls[0]?.[1]).toEqual(expect.objectContaining({ tenantId: 'ten_1', bankId: 'bnk_1', ...sent }));
    expect(calls[0]?.[2]).toEqual({ requestId: 'req-1' });
    expect(view).toEqual(expect.objectContaining({ id: 'bnk_1', description: null, policy: null }));
  });

  it.each<[string, Record<string, unknown>, unknown]>([
    ['off', { floodWindowSeconds: 0 }, null],
    ['on', { floodThreshold: 3, floodWindowSeconds: 60 }, { threshold: 3, windowSeconds: 60 }],
  ])('shows a bank whose flood quarantine is %s', async (_name, fields, flood) => {
    const { caller } = fakeCaller({ ...bank, ...fields });
    expect((await updateHashBank(caller, 'bnk_1', {})).flood).toEqual(flood);
  });

  it('lists quarantined hashes with their metadata as objects', async () => {
    const { caller, calls } = fakeCaller({
      quarantines: [
        {
          hashId: 'hsh_1',
          bankId: 'bnk_1',
          bankName: 'Memes',
          kind: 'pdq',
          state: 'quarantined',
          number: 1,
          ...QUARANTINE_COUNTS,
          metadataJson: '{"label":"meme"}',
        },
      ],
    });
    expect(await listHashQuarantines(caller)).toEqual([
      {
        hashId: 'hsh_1',
        bank: { id: 'bnk_1', name: 'Memes' },
        kind: 'pdq',
        state: 'quarantined',
        quarantine: 1,
        ...QUARANTINE_COUNTS,
        metadata: { label: 'meme' },
      },
    ]);
    expect(calls[0]?.[0]).toBe('listHashQuarantines');
  });

  it('lookup: sends a hash lowercased and answers matches with their metadata as objects', async () => {
    const match = {
      position: 0,
      bankId: 'bnk_1',
      bankName: 'Known',
      kind: 'md5',
      distance: 0,
      hashId: 'hsh_1',
      metadataJson: '{"source":"ncmec","n":1}',
      action: 'flag_and_suspend',
    };
    const { caller, calls } = fakeCaller({ matches: [match], cancelled: [{ ...match, cancelledBy: 'hsh_2' }] });
    const result = await lookupHashes(caller, { kind: 'md5', hash: 'A'.repeat(32) });
    expect(calls[0]?.[1]).toEqual({ tenantId: 'ten_1', kind: 'md5', value: 'a'.repeat(32) });
    expect(result).toEqual({
      image: null,
      matches: [
        {
          image: 0,
          bank: { id: 'bnk_1', name: 'Known' },
          kind: 'md5',
          distance: 0,
          hashId: 'hsh_1',
          // Only string values are metadata.
          metadata: { source: 'ncmec' },
          action: 'flag_and_suspend',
          policy: null,
        },
      ],
      cancelled: [expect.objectContaining({ hashId: 'hsh_1', cancelledBy: 'hsh_2' })],
      failure: null,
    });
  });
});
