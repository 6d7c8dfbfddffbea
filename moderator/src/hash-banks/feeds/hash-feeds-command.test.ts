import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { UsageError } from '../../admin/dead-letters-command';
import { hashFeedsCommand } from './hash-feeds-command';
import { callRecorder } from '../testing/call-recorder';

const feed = { _id: 'fed_1', bankId: 'bnk_1', source: 'file', credentials: 'v1.sealed', url: 'https://x/h.csv' };

function fakeFeeds() {
  const { calls, record } = callRecorder(feed);
  return {
    calls,
    feeds: {
      list: record('list', [feed]),
      create: record('create'),
      update: record('update'),
      delete: record('delete', undefined),
      run: record('run'),
    } as unknown as Parameters<typeof hashFeedsCommand>[0],
  };
}

describe('hashFeedsCommand', () => {
  it.each<[string[], unknown[]]>([
    [
      ['list', 't1', 'bnk_1'],
      ['list', 't1', 'bnk_1'],
    ],
    [
      ['add', 't1', 'bnk_1', 'file', '--url', 'https://x/h.csv', '--interval', '600'],
      ['create', 't1', 'bnk_1', { source: 'file', url: 'https://x/h.csv', intervalS: 600 }],
    ],
    [
      ['add', 't1', 'bnk_1', 'file'],
      ['create', 't1', 'bnk_1', { source: 'file', url: undefined, intervalS: 3600 }],
    ],
    [
      ['run', 't1', 'bnk_1', 'fed_1'],
      ['run', 't1', 'bnk_1', 'fed_1'],
    ],
    [
      ['disable', 't1', 'bnk_1', 'fed_1'],
      ['update', 't1', 'bnk_1', 'fed_1', { enabled: false }],
    ],
    [
      ['enable', 't1', 'bnk_1', 'fed_1'],
      ['update', 't1', 'bnk_1', 'fed_1', { enabled: true }],
    ],
    [
      ['delete', 't1', 'bnk_1', 'fed_1'],
      ['delete', 't1', 'bnk_1', 'fed_1'],
    ],
  ])('%j calls the use case as the API would', async (args, expected) => {
    const { feeds, calls } = fakeFeeds();
    await hashFeedsCommand(feeds, args);
    expect(calls).toEqual([expected]);
  });

  it('reads credentials from a file and never prints them', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'feeds-'));
    const file = path.join(dir, 'keys.json');
    writeFileSync(file, '{"username":"u","password":"p"}');
    const { feeds, calls } = fakeFeeds();
    const printed = await hashFeedsCommand(feeds, ['add', 't1', 'bnk_1', 'ncmec', '--credentials', file]);
    expect(calls[0]).toEqual([
      'create',
      't1',
      'bnk_1',
      { source: 'ncmec', url: undefined, intervalS: 3600, credentialsJson: '{"username":"u","password":"p"}' },
    ]);
    expect(printed).toMatchObject({ _id: 'fed_1', hasCredentials: true });
    expect(JSON.stringify(printed)).not.toContain('v1.sealed');
    expect(JSON.stringify(await hashFeedsCommand(feeds, ['list', 't1', 'bnk_1']))).not.toContain('v1.sealed');
  });

  it.each([
    [['list', 't1']],
    [['add', 't1', 'bnk_1']],
    [['add', 't1', 'bnk_1', 'file', '--interval', 'soon']],
    [['add', 't1', 'bnk_1', 'file', '--password', 'x']],
    [['run', 't1', 'bnk_1']],
    [['pause', 't1', 'bnk_1', 'fed_1']],
  ])('refuses %j with the usage', async (args) => {
    await expect(hashFeedsCommand(fakeFeeds().feeds, args)).rejects.toBeInstanceOf(UsageError);
  });
});
