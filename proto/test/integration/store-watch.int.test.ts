import { MongoClient } from 'mongodb';
import pino from 'pino';
import { Registry } from 'prom-client';
import { testServers, uniqueName, waitFor } from '../../../deploy/test-support';
import { startStoreRelay } from '../../../deploy/test-support/store-relay';
import { watchStoreCommands } from '../../src/platform/store-metrics';

// A store that holds its answers (the relay's `delay`): the command waiting on it is logged once, by name and
// collection, and shows in the in-flight metrics until its answer comes.
describe('the watch over store commands', () => {
  it('logs a command the store left unanswered past the bound, once, and counts it in flight until answered', async () => {
    const relay = await startStoreRelay({ mongoUrl: testServers().mongoUrl, delayMs: 3_000 });
    const client = new MongoClient(relay.url, { serverSelectionTimeoutMS: 5_000, monitorCommands: true });
    const registry = new Registry();
    const lines: Array<Record<string, unknown>> = [];
    const log = pino({}, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    const stop = watchStoreCommands(client, registry, 'watch', log, 600);
    const gauge = async (name: string) =>
      (await registry.getSingleMetric(`watch_${name}`)?.get())?.values[0]?.value ?? Number.NaN;
    const db = client.db(uniqueName('store_watch'));
    try {
      const items = db.collection<{ _id: string }>('items');
      await items.insertOne({ _id: 'a' });
      expect(await gauge('store_commands_in_flight')).toBe(0);

      relay.setFault('delay');
      const answered = items.findOne({ _id: 'a' });
      const unanswered = () => lines.filter((line) => line.msg === 'store command unanswered');
      await waitFor(() => unanswered().length > 0, { timeoutMs: 10_000, what: 'the warning' });
      expect(unanswered()[0]).toMatchObject({ command: 'find', collection: 'items', level: 40 });
      expect(Number(unanswered()[0]!.waitedMs)).toBeGreaterThanOrEqual(600);
      expect(await gauge('store_commands_in_flight')).toBeGreaterThanOrEqual(1);
      expect(await gauge('store_command_oldest_seconds')).toBeGreaterThanOrEqual(0.6);

      expect(await answered).toEqual({ _id: 'a' });
      relay.setFault(undefined);
      expect(unanswered().filter((line) => line.command === 'find')).toHaveLength(1);
      await waitFor(async () => (await gauge('store_commands_in_flight')) === 0, { what: 'nothing in flight' });
      expect(await gauge('store_command_oldest_seconds')).toBe(0);
    } finally {
      stop();
      relay.setFault(undefined);
      await db.dropDatabase().catch(() => undefined);
      await client.close();
      await relay.close();
    }
  });
});
