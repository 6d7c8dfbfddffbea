import { type DomainEvent } from '@vigil/proto';
import { ensureTopics, untilDone, type Reaction, ConsumerMetrics } from '@vigil/proto/platform';
import type { Config } from '../config';
import { counterIn, type NotifierModule, type NotifierParts } from '../notifier-module';
import { DeadLetterStore } from '../store/dead-letter-store';
import { EventsConsumer, type WebhookCommandHandler, type WriteBehind } from './events-consumer';

export type KafkaConfig = Pick<Config, 'KAFKA_GROUP_ID' | 'KAFKA_COMMIT_INTERVAL_MS' | 'KAFKA_TOPIC_PARTITIONS'>;

export interface KafkaFeatures {
  /** What the other modules do with the decoded events, each on the event types it declares. */
  reactions: readonly Reaction<DomainEvent>[];
  /** Applies the webhook commands. */
  commands: WebhookCommandHandler;
  /** Writes the reactions finish after their batch, which its offset commit waits for. */
  writeBehind?: WriteBehind;
}

/**
 * The events consumer: reads the moderator's events and the gateway's webhook commands, hands each batch's events to
 * the reactions that declare their types and each command to its handler, and commits once they held. It is the
 * notifier's intake: listed last, it starts once the features it feeds run and stops taking work before them.
 */
export async function kafkaModule(
  config: KafkaConfig,
  parts: NotifierParts,
  features: KafkaFeatures,
): Promise<NotifierModule> {
  const { log, kafka, registry, topics } = parts;
  await untilDone(log, 'kafka topics', () =>
    ensureTopics(kafka, [topics.events, topics.webhookCommands], config.KAFKA_TOPIC_PARTITIONS),
  );
  const deadLetters = counterIn(
    parts,
    'notifier_events_dead_letters_total',
    'Events and webhook commands set aside after their retries, by reason',
    'reason',
  );
  const consumer = new EventsConsumer({
    kafka,
    groupId: config.KAFKA_GROUP_ID,
    timing: parts.consumerTiming,
    metrics: registry ? new ConsumerMetrics(registry, 'notifier_events_consumer') : undefined,
    commitIntervalMs: config.KAFKA_COMMIT_INTERVAL_MS,
    topics,
    reactions: features.reactions,
    commands: features.commands,
    writeBehind: features.writeBehind,
    deadLetters: new DeadLetterStore(parts.db),
    log: log.child({ component: 'events' }),
    onDeadLetter: (reason) => deadLetters?.inc({ reason }),
  });
  return {
    name: 'events consumer',
    start: () => untilDone(log, 'events consumer', () => consumer.start()),
    stopIntake: () => consumer.stop(),
  };
}
