import type { MongoClient } from 'mongodb';
import { Counter, type Registry } from 'prom-client';

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
