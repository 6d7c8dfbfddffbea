import { randomBytes } from 'node:crypto';
import { COLLECTIONS } from '@vigil/proto';
import { startHashFileServer, type HashFileServer } from '../../../deploy/test-support/hash-exchanges';
import { loggedPort, spawnModerator, uniqueName, waitFor, type ServiceProcess } from '../../../deploy/test-support';
import { startGateway, type Gateway } from './harness';

// A feed run by two moderator replicas polling the same store every 100 ms: each due run is fetched by one of them,
// and a replica SIGKILLed mid-fetch leaves the run to the other once its lease ends (12 × HASH_FEED_TIMEOUT_MS of
// 2 s). The gateway talks to the first replica until it may be killed; then the test reads the store.

const WAIT = 40_000;
const md5 = (n: number) => n.toString(16).padStart(32, '0');

let replicas: ServiceProcess[];
let gw: Gateway;
let tenant: { tenantId: string; key: string };
let files: HashFileServer;

beforeAll(async () => {
  files = await startHashFileServer(`${md5(1)}\n`);
  const stack = { dbName: uniqueName('feedreplicas'), topicPrefix: `${uniqueName('t')}.` };
  const env = {
    HASH_FEED_ALLOWED_CIDRS: '127.0.0.0/8',
    HASH_FEED_POLL_MS: '100',
    HASH_FEED_RETRY_MS: '300',
    HASH_FEED_TIMEOUT_MS: '2000',
    SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  };
  // One after the other, with a start-up deadline for a busy 2-core machine (a new database's indexes come first).
  const listening = async (replica: ServiceProcess) =>
    `127.0.0.1:${await loggedPort(replica, 'grpc server listening', 'port', 90_000)}`;
  replicas = [spawnModerator(stack, env)];
  const first = await listening(replicas[0]!);
  replicas.push(spawnModerator(stack, env));
  await listening(replicas[1]!);
  gw = await startGateway({ moderatorAddress: first, ...stack });
  tenant = await gw.newTenant();
}, 240_000);

afterAll(async () => {
  await gw?.close();
  await Promise.all((replicas ?? []).map((replica) => replica.stop()));
  await files?.close();
});

const api = (method: string, route: string, body?: unknown) =>
  gw.request(method, `/api/v1${route}`, { key: tenant.key, ...(body !== undefined ? { body } : {}) });

interface StoredFeed {
  lastRun?: { state: string; at: Date; added: number };
}

const claims = (replica: ServiceProcess, feedId: string) =>
  replica.logs().filter((line) => line.msg === 'hash feed run claimed' && line.feedId === feedId).length;

it('each due run is fetched by one replica, and a replica killed mid-fetch leaves the run to the other', async () => {
  const bank = await api('POST', '/hash-banks', { name: uniqueName('bank'), kind: 'md5' });
  const bankId = (bank.body.data as { id: string }).id;
  const created = await api('POST', `/hash-banks/${bankId}/feeds`, { source: 'file', url: files.url });
  const feedId = (created.body.data as { id: string }).id;
  const stored = async () =>
    (await gw.db.collection(COLLECTIONS.hashFeeds).findOne({ _id: feedId as never })) as StoredFeed | null;
  const runAfter = async (after: number) => {
    await waitFor(async () => ((await stored())?.lastRun?.at.getTime() ?? 0) > after, {
      timeoutMs: WAIT,
      what: 'the next run',
    });
    return (await stored())!.lastRun!;
  };

  // Four runs (the first, then three made due at once), both replicas polling ten times a second: four fetches.
  let last = (await runAfter(0)).at.getTime();
  for (let n = 0; n < 3; n++) {
    expect((await api('POST', `/hash-banks/${bankId}/feeds/${feedId}/run`)).status).toBe(202);
    last = (await runAfter(last)).at.getTime();
  }
  expect(files.requests.map((request) => request.status)).toEqual([200, 304, 304, 304]);
  expect(claims(replicas[0]!, feedId) + claims(replicas[1]!, feedId)).toBe(4);

  // The next fetch hangs; the replica that claimed it is killed; the other runs it after the lease.
  const before = replicas.map((replica) => claims(replica, feedId));
  files.hold = true;
  files.content = `${md5(1)}\n${md5(2)}\n`;
  await api('POST', `/hash-banks/${bankId}/feeds/${feedId}/run`);
  await waitFor(() => files.requests.length === 5, { timeoutMs: WAIT, what: 'the held fetch' });
  const claimant = replicas.findIndex((replica, index) => claims(replica, feedId) > before[index]!);
  expect(claimant).toBeGreaterThanOrEqual(0);
  await replicas[claimant]!.stop('SIGKILL');
  files.hold = false;
  const taken = await runAfter(last);
  expect(taken).toMatchObject({ state: 'ok', added: 1 });
  expect(claims(replicas[1 - claimant]!, feedId)).toBeGreaterThan(before[1 - claimant]!);
  const hashes = await gw.db.collection(COLLECTIONS.bankHashes).find({ bankId }).toArray();
  expect(hashes.map((hash) => hash.value as string).sort()).toEqual([md5(1), md5(2)]);
});
