/**
 * Kafka topic names. A prefix (config `KAFKA_TOPIC_PREFIX`, default empty) lets several deployments or test runs
 * share one cluster.
 */
export interface Topics {
  /** Commands from the gateway to the moderator. Key: `${tenantId}:${clientId}`. */
  ingest: string;
  /** Commands that can never succeed, with the reason in headers. */
  ingestDeadLetter: string;
  /** Stored events relayed from the moderator's outbox. Key: the event's stream. */
  events: string;
  /** Retry, replay and re-enable requests from the gateway to the notifier. Key: endpoint id. */
  webhookCommands: string;
}

export function topicNames(prefix = ''): Topics {
  return {
    ingest: `${prefix}vigil.ingest.v1`,
    ingestDeadLetter: `${prefix}vigil.ingest.dlq.v1`,
    events: `${prefix}vigil.events.v1`,
    webhookCommands: `${prefix}vigil.webhook-commands.v1`,
  };
}

/** Kafka headers every message carries. */
export const HEADERS = {
  eventId: 'event-id',
  eventType: 'event-type',
  deadLetterReason: 'dead-letter-reason',
  /**
   * On a dead letter sent without its key and value (the dead-letter topic refused the original): where the original
   * is, `topic/partition/offset`.
   */
  deadLetterSource: 'dead-letter-source',
} as const;
