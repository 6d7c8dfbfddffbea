import { MongoClient, MongoNetworkError } from 'mongodb';
import { droppedTotal, startStoreRelay, type StoreRelay } from './store-relay';
import { testServers, uniqueName, waitFor } from '.';

/**
 * The store relay against the run's MongoDB-wire server: each fault really happens (connections reset, replies held
 * past a client's socket timeout, a write's reply lost after the write), is counted, and the store answers again
 * through the relay once the fault is off.
 */
const DELAY_MS = 1500;
const dbName = uniqueName('store_relay');
const direct = new MongoClient(testServers().mongoUrl);
let relay: StoreRelay;
const clients: MongoClient[] = [];

/** A client through the relay, without retries, so each failure the relay causes reaches the caller. */
const throughRelay = (options: { socketTimeoutMS?: number } = {}) => {
  const client = new MongoClient(relay.url, {
    serverSelectionTimeoutMS: 2000,
    retryWrites: false,
    retryReads: false,
    ...options,
  });
  clients.push(client);
  return client;
};

beforeAll(async () => {
  relay = await startStoreRelay({ mongoUrl: testServers().mongoUrl, delayMs: DELAY_MS });
});

afterEach(() => relay.setFault(undefined));

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await relay.close();
  await direct
    .db(dbName)
    .dropDatabase()
    .catch(() => undefined);
  await direct.close();
});

describe('store relay', () => {
  it('keeps the database name and options of the real URL', async () => {
    const other = await startStoreRelay({ mongoUrl: 'mongodb://u:p@127.0.0.1:9/vigil?appName=x', delayMs: 1 });
    try {
      expect(other.url).toBe(`mongodb://u:p@127.0.0.1:${other.port}/vigil?appName=x`);
    } finally {
      await other.close();
    }
  });

  it('forwards commands both ways while no fault is on', async () => {
    const client = throughRelay();
    const items = client.db(dbName).collection<{ _id: string }>('forward');
    await items.insertOne({ _id: 'a' });
    expect(await items.findOne({ _id: 'a' })).toEqual({ _id: 'a' });
    expect(relay.counts()).toMatchObject({ reset: 0, refused: 0, delayed: 0, dropped: {} });
  });

  it('resets open connections and refuses new ones while reset is on, then forwards again', async () => {
    const client = throughRelay();
    const items = client.db(dbName).collection<{ _id: string }>('reset');
    await items.insertOne({ _id: 'before' });
    const before = relay.counts();
    relay.setFault('reset');
    expect(relay.counts().reset).toBeGreaterThan(before.reset);
    expect(relay.open()).toBe(0);
    await expect(items.findOne({ _id: 'before' })).rejects.toThrow();
    // A client that was never connected cannot connect at all.
    await expect(throughRelay().connect()).rejects.toThrow();
    expect(relay.counts().refused).toBeGreaterThan(before.refused);
    relay.setFault(undefined);
    await waitFor(async () => (await items.findOne({ _id: 'before' }))?._id === 'before', {
      timeoutMs: 20000,
      what: 'the store answering through the relay again',
    });
  });

  it('holds replies delayMs, past a shorter socket timeout, while delay is on', async () => {
    const patient = throughRelay().db(dbName).collection<{ _id: string }>('delay');
    const hasty = throughRelay({ socketTimeoutMS: DELAY_MS / 3 })
      .db(dbName)
      .collection<{ _id: string }>('delay');
    await patient.insertOne({ _id: 'x' });
    await hasty.findOne({ _id: 'x' });
    relay.setFault('delay');
    const started = Date.now();
    const found = patient.findOne({ _id: 'x' });
    await waitFor(() => relay.held() > 0, { what: 'a reply held' });
    expect(await found).toEqual({ _id: 'x' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(DELAY_MS - 50);
    await expect(hasty.findOne({ _id: 'x' })).rejects.toThrow(MongoNetworkError);
    expect(relay.counts().delayed).toBeGreaterThanOrEqual(2);
  });

  it('lets a write run, then drops its reply and resets the connection, while drop is on', async () => {
    const items = throughRelay().db(dbName).collection<{ _id: string }>('drop');
    await items.insertOne({ _id: 'warm' });
    relay.setFault('drop');
    // Reads go through.
    expect(await items.findOne({ _id: 'warm' })).toEqual({ _id: 'warm' });
    await expect(items.insertOne({ _id: 'lost-reply' })).rejects.toThrow(MongoNetworkError);
    relay.setFault(undefined);
    // The store has the document its writer was told nothing about.
    const stored = await direct.db(dbName).collection<{ _id: string }>('drop').findOne({ _id: 'lost-reply' });
    expect(stored).toEqual({ _id: 'lost-reply' });
    expect(relay.counts().dropped).toEqual({ insert: 1 });
    expect(droppedTotal(relay.counts())).toBeGreaterThanOrEqual(1);
    await waitFor(async () => (await items.findOne({ _id: 'lost-reply' }))?._id === 'lost-reply', {
      timeoutMs: 20000,
      what: 'the store answering through the relay again',
    });
  });
});
