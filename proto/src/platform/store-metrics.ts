import type { MongoClient } from 'mongodb';
import { Counter, type Registry } from 'prom-client';

/**
 * Counts the store commands this process sends, by command name (`find`, `insert`, `update`, …), through the driver's
 * command monitoring: `<prefix>_store_commands_total`. The benchmarks divide it by the records they pushed through,
 * so every round trip a change adds or saves shows. Call before the client's first command.
 */
export function countStoreCommands(client: MongoClient, registry: Registry, prefix: string): void {
  const commands = new Counter({
    name: `${prefix}_store_commands_total`,
    help: 'Commands sent to the MongoDB-wire store, by command name',
    labelNames: ['command'],
    registers: [registry],
  });
  client.on('commandStarted', (event) => commands.inc({ command: event.commandName }));
}
