import type { MongoClient } from 'mongodb';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';

/**
 * Counts the store commands this process sends, by command name (`find`, `insert`, `update`, …) and collection,
 * through the driver's command monitoring: `<prefix>_store_commands_total`. The benchmarks divide it by the records
 * they pushed through, so every round trip a change adds or saves shows, and where. Call before the client's first
 * command. The collection label is bounded: the collections are the code's own (`proto/src/collections.ts`), and a
 * command without one (`ping`, `hello`, `endSessions`) has an empty label.
 */
export function countStoreCommands(client: MongoClient, registry: Registry, prefix: string): void {
  const commands = new Counter({
    name: `${prefix}_store_commands_total`,
    help: 'Commands sent to the MongoDB-wire store, by command name and collection',
    labelNames: ['command', 'collection'],
    registers: [registry],
  });
  client.on('commandStarted', (event) =>
    commands.inc({ command: event.commandName, collection: collectionOf(event.commandName, event.command) }),
  );
}

/** The collection a command names: its first field's value (`{ find: 'records', … }`), or `collection` (getMore). */
function collectionOf(name: string, command: Record<string, unknown>): string {
  const named = name === 'getMore' ? command.collection : command[name];
  return typeof named === 'string' && named.length <= 64 ? named : '';
}

/** A store command unanswered this long is logged once (`store command unanswered`): the store or the path to it hangs. */
const STORE_COMMAND_UNANSWERED_MS = 30_000;

/**
 * Watches the store commands in flight, through the driver's command monitoring: `<prefix>_store_commands_in_flight`
 * and `<prefix>_store_command_oldest_seconds` (how long the oldest has waited for its answer), and a warning, once per
 * command, for one that waited `unansweredMs` (its name and collection, never its content). The client sets no socket
 * timeout (a long index build is legitimate), so a command whose answer never comes would otherwise hold what waits on
 * it without a trace. A timer checks every third of `unansweredMs`; it does not keep the process alive.
 */
export function watchStoreCommands(
  client: MongoClient,
  registry: Registry,
  prefix: string,
  log: Pick<Logger, 'warn'>,
  unansweredMs = STORE_COMMAND_UNANSWERED_MS,
): () => void {
  const inFlight = new Map<number, { command: string; collection: string; at: number; told: boolean }>();
  const oldestMs = () => {
    let oldest = 0;
    const now = Date.now();
    for (const entry of inFlight.values()) oldest = Math.max(oldest, now - entry.at);
    return oldest;
  };
  new Gauge({
    name: `${prefix}_store_commands_in_flight`,
    help: 'Commands sent to the MongoDB-wire store and not answered yet',
    registers: [registry],
    collect() {
      this.set(inFlight.size);
    },
  });
  new Gauge({
    name: `${prefix}_store_command_oldest_seconds`,
    help: 'How long the oldest store command in flight has waited for its answer, seconds',
    registers: [registry],
    collect() {
      this.set(oldestMs() / 1000);
    },
  });
  client.on('commandStarted', (event) =>
    inFlight.set(event.requestId, {
      command: event.commandName,
      collection: collectionOf(event.commandName, event.command),
      at: Date.now(),
      told: false,
    }),
  );
  client.on('commandSucceeded', (event) => inFlight.delete(event.requestId));
  client.on('commandFailed', (event) => inFlight.delete(event.requestId));
  const timer = setInterval(
    () => {
      const now = Date.now();
      for (const entry of inFlight.values()) {
        if (entry.told || now - entry.at < unansweredMs) continue;
        entry.told = true;
        log.warn(
          { command: entry.command, collection: entry.collection, waitedMs: now - entry.at, inFlight: inFlight.size },
          'store command unanswered',
        );
      }
    },
    Math.max(1, Math.floor(unansweredMs / 3)),
  );
  timer.unref();
  return () => clearInterval(timer);
}
