import type { DeadLetterStore, OutboxDeadLetterDoc } from '../store/dead-letter-store';

export const DEAD_LETTERS_USAGE = `usage:
  dead-letters list [--all]     open dead letters (--all: replayed ones too), oldest first
  dead-letters replay <eventId> put the stored event back into the outbox`;

/** A mistake of the operator's: the CLI prints it and exits 2. */
export class UsageError extends Error {}

/**
 * The operator commands on the outbox's dead letters, apart from the process glue so tests run them in-process. Returns
 * what the CLI prints (JSON): ids, reason, sizes and times, never the event's content.
 */
export async function deadLettersCommand(store: DeadLetterStore, args: string[]): Promise<unknown> {
  const [verb, arg] = args;
  switch (verb) {
    case 'list': {
      if (arg !== undefined && arg !== '--all') throw new UsageError(DEAD_LETTERS_USAGE);
      return (await store.list({ all: arg === '--all', limit: 1000 })).map(view);
    }
    case 'replay': {
      if (!arg) throw new UsageError('an event id is required');
      if (!(await store.replay(arg))) throw new UsageError(`no open dead letter "${arg}"`);
      return { eventId: arg, replayed: true, note: 'the outbox relay publishes it with its next batch' };
    }
    default:
      throw new UsageError(DEAD_LETTERS_USAGE);
  }
}

function view(doc: OutboxDeadLetterDoc) {
  return {
    eventId: doc._id,
    tenantId: doc.tenantId,
    stream: doc.stream,
    version: doc.version,
    eventType: doc.eventType,
    reason: doc.reason,
    error: doc.error,
    bytes: doc.bytes,
    state: doc.state,
    count: doc.count,
    firstAt: doc.firstAt,
    lastAt: doc.lastAt,
    replayedAt: doc.replayedAt ?? null,
  };
}
