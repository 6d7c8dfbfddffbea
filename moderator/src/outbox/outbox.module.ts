import { untilDone, notingPartitioner } from '@vigil/proto/platform';
import type { Config } from '../config';
import type { ModeratorModule, SharedParts } from '../shared-parts';
import { DeadLetterStore } from '../store/dead-letter-store';
import type { OutboxStore } from '../store/outbox-store';
import { OutboxRelay } from './outbox-relay';

/** The variables the outbox relay reads (see `config.ts`). */
export type OutboxConfig = Pick<
  Config,
  'OUTBOX_POLL_MS' | 'OUTBOX_SWEEP_MAX_MS' | 'OUTBOX_MIN_GAP_MS' | 'OUTBOX_BATCH_SIZE'
>;

export interface OutboxModule extends ModeratorModule {
  relay: OutboxRelay;
  /** The events the broker refused, kept for an operator (see `admin/dead-letters-command.ts`). */
  deadLetters: DeadLetterStore;
}

/**
 * The outbox relay: publishes the events commits appended, in stream order, with producers of its own. It starts
 * before anything takes work, and flushes what is left after intake stopped and the shadow judgements drained.
 */
export async function outboxModule(
  config: OutboxConfig,
  { log, db, kafka, topics, metrics }: SharedParts,
  outbox: OutboxStore,
): Promise<OutboxModule> {
  const deadLetters = new DeadLetterStore(db);
  await untilDone(log, 'dead letter indexes', () => deadLetters.ensureIndexes());
  const relay = new OutboxRelay({
    outbox,
    deadLetters,
    createProducer: () =>
      kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: notingPartitioner }),
    topic: topics.events,
    log: log.child({ component: 'outbox-relay' }),
    pollMs: config.OUTBOX_POLL_MS,
    sweepMaxMs: config.OUTBOX_SWEEP_MAX_MS,
    minGapMs: config.OUTBOX_MIN_GAP_MS,
    batchSize: config.OUTBOX_BATCH_SIZE,
    onPublished: (count) => metrics?.published.inc(count),
    onDeadLetter: (reason) => metrics?.outboxDeadLetters.inc({ reason }),
  });
  return {
    name: 'outbox-relay',
    relay,
    deadLetters,
    start: () => relay.start(),
    drain: () => relay.stop({ flush: true }),
  };
}
