import { CreateHashFeedBody, UpdateHashFeedBody } from '../../routes/hash-banks/hash-feeds.schema';
import { createHashFeed } from './create-hash-feed';
import { updateHashFeed } from './update-hash-feed';
import { fakeCaller } from './testing/fake-caller';

const feed = {
  id: 'fed_1',
  bankId: 'bnk_1',
  source: 'stopncii',
  url: 'https://api.stopncii.org/v1',
  intervalSeconds: 3600,
  enabled: true,
  hasCredentials: true,
  lastRun: {
    state: 'failed',
    at: '2026-01-01T00:00:00.000Z',
    added: 0,
    withdrawn: 0,
    duplicates: 0,
    failure: 'unauthorized',
    message: 'StopNCII FetchHashes: unauthorized (401)',
    failures: 2,
  },
  nextRunAt: '2026-01-01T00:01:00.000Z',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
};

describe('hash feed use cases', () => {
  it('create: the credentials travel once as JSON, and the view says only that there are some', async () => {
    const { caller, calls } = fakeCaller(feed);
    const body = CreateHashFeedBody.parse({
      source: 'stopncii',
      credentials: { subscriptionKey: 'sub', fetchFunctionKey: 'fetch' },
    });
    const view = await createHashFeed(caller, 'bnk_1', body);
    expect(calls[0]).toEqual([
      'createHashFeed',
      {
        tenantId: 'ten_1',
        bankId: 'bnk_1',
        source: 'stopncii',
        url: '',
        intervalSeconds: 3600,
        enabled: true,
        credentialsJson: '{"subscriptionKey":"sub","fetchFunctionKey":"fetch"}',
      },
      { requestId: 'req-1' },
    ]);
    expect(view).toEqual({
      id: 'fed_1',
      bank: 'bnk_1',
      source: 'stopncii',
      url: 'https://api.stopncii.org/v1',
      intervalSeconds: 3600,
      enabled: true,
      hasCredentials: true,
      lastRun: { ...feed.lastRun },
      nextRunAt: feed.nextRunAt,
      createdAt: feed.createdAt,
      updatedAt: feed.updatedAt,
    });
  });

  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['null removes the credentials', { credentials: null }, { clearCredentials: true }],
    [
      'new credentials replace them',
      { credentials: { authorization: 'Bearer x' } },
      { credentialsJson: '{"authorization":"Bearer x"}', clearCredentials: false },
    ],
    ['absent leaves them', { enabled: false }, { enabled: false, clearCredentials: false }],
  ])('update: %s', async (_name, patch, sent) => {
    const { caller, calls } = fakeCaller(feed);
    await updateHashFeed(caller, 'bnk_1', 'fed_1', UpdateHashFeedBody.parse(patch));
    expect(calls[0]?.[1]).toEqual(expect.objectContaining({ bankId: 'bnk_1', feedId: 'fed_1', ...sent }));
    if (!('credentials' in patch) || patch.credentials === null) {
      expect(calls[0]?.[1]).not.toHaveProperty('credentialsJson');
    }
  });

  it.each([
    ['a file feed without a URL', { source: 'file' }],
    ['an exchange without credentials', { source: 'ncmec' }],
    ['credentials of another shape', { source: 'ncmec', credentials: { user: 'u', password: 'p' } }],
    ['an ftp URL', { source: 'file', url: 'ftp://x/h.csv' }],
    ['an interval of 10 s', { source: 'file', url: 'https://x/h.csv', intervalSeconds: 10 }],
    ['an unknown field', { source: 'file', url: 'https://x/h.csv', schedule: 'daily' }],
  ])('the schema refuses %s', (_name, body) => {
    expect(CreateHashFeedBody.safeParse(body).success).toBe(false);
  });
});
