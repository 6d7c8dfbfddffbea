import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { UsageError } from '../admin/dead-letters-command';
import { hashBanksCommand } from './hash-banks-command';
import { callRecorder } from './testing/call-recorder';

function fakeBanks() {
  const { calls, record } = callRecorder({});
  return {
    calls,
    banks: {
      listBanks: record('listBanks', [{ _id: 'bnk_1', salt: 'secret' }]),
      createBank: record('createBank', { _id: 'bnk_1' }),
      addHashes: record('addHashes', { added: [{}, {}], duplicates: 1 }),
      listHashes: record('listHashes', { items: [], hasMore: false }),
      updateHash: record('updateHash'),
      withdrawHash: record('withdrawHash'),
      lookup: record('lookup', { matches: [], cancelled: [] }),
    } as unknown as Parameters<typeof hashBanksCommand>[0],
  };
}

describe('hashBanksCommand', () => {
  it.each<[string[], unknown[]]>([
    [
      ['list', 't1'],
      ['listBanks', 't1'],
    ],
    [
      ['create', 't1', 'NCII', 'pdq', '--distance', '20', '--policy', 'ncii', '--negative'],
      [
        'createBank',
        't1',
        { name: 'NCII', kind: 'pdq', distance: 20, policyId: 'ncii', action: 'flag', negative: true, enabled: true },
      ],
    ],
    [
      ['create', 't1', 'Files', 'md5', '--action', 'flag_and_suspend', '--disabled'],
      ['createBank', 't1', { name: 'Files', kind: 'md5', action: 'flag_and_suspend', negative: false, enabled: false }],
    ],
    [
      ['create', 't1', 'Memes', 'pdq', '--flood', '100', '--flood-window', '600'],
      [
        'createBank',
        't1',
        {
          name: 'Memes',
          kind: 'pdq',
          action: 'flag',
          negative: false,
          enabled: true,
          floodThreshold: 100,
          floodWindowSeconds: 600,
        },
      ],
    ],
    [
      ['hashes', 't1', 'bnk_1', '--after', 'hsh_x'],
      ['listHashes', 't1', 'bnk_1', { limit: 100, startingAfter: 'hsh_x' }],
    ],
    [
      ['set', 't1', 'bnk_1', 'hsh_x', 'deconfirm'],
      ['updateHash', 't1', 'bnk_1', 'hsh_x', { review: 'deconfirmed' }],
    ],
    [
      ['set', 't1', 'bnk_1', 'hsh_x', 'disable'],
      ['updateHash', 't1', 'bnk_1', 'hsh_x', { enabled: false }],
    ],
    [
      ['withdraw', 't1', 'bnk_1', 'hsh_x'],
      ['withdrawHash', 't1', 'bnk_1', 'hsh_x'],
    ],
    [
      ['lookup', 't1', 'md5', 'a'.repeat(32)],
      ['lookup', 't1', { kind: 'md5', value: 'a'.repeat(32) }],
    ],
  ])('%j calls the use case with its arguments', async (args, call) => {
    const { banks, calls } = fakeBanks();
    await hashBanksCommand(banks, args);
    expect(calls).toEqual([call]);
  });

  it('never prints a bank’s salt', async () => {
    const { banks } = fakeBanks();
    expect(await hashBanksCommand(banks, ['list', 't1'])).toEqual([{ _id: 'bnk_1' }]);
  });

  it('imports a CSV file and prints counts, not the hashes', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hashes-'));
    const file = path.join(dir, 'bank.csv');
    writeFileSync(file, `hash\n${'a'.repeat(64)}\n`);
    const { banks, calls } = fakeBanks();
    expect(await hashBanksCommand(banks, ['import', 't1', 'bnk_1', file])).toEqual({
      bankId: 'bnk_1',
      added: 2,
      duplicates: 1,
    });
    expect(calls).toEqual([['addHashes', 't1', 'bnk_1', { hashes: [], csv: `hash\n${'a'.repeat(64)}\n` }]]);
  });

  it.each([
    [[]],
    [['list']],
    [['create', 't1', 'x']],
    [['create', 't1', 'x', 'pdq', '--distance', 'far']],
    [['create', 't1', 'x', 'pdq', '--colour', 'red']],
    [['create', 't1', 'x', 'pdq', '--flood', 'many']],
    [['set', 't1', 'bnk_1', 'hsh_x', 'delete']],
    [['withdraw', 't1', 'bnk_1']],
    [['purge', 't1']],
  ])('refuses %j with its usage', async (args) => {
    await expect(hashBanksCommand(fakeBanks().banks, args)).rejects.toBeInstanceOf(UsageError);
  });
});
