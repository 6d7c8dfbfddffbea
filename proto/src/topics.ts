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
  /** Backtest jobs from the gateway to the moderators (StartBacktest). Key: tenant id. */
  backtests: string;
}

export function topicNames(prefix = ''): Topics {
  return {
    ingest: `${prefix}vigil.ingest.v1`,
    ingestDeadLetter: `${prefix}vigil.ingest.dlq.v1`,
    events: `${prefix}vigil.events.v1`,
    webhookCommands: `${prefix}vigil.webhook-commands.v1`,
    backtests: `${prefix}vigil.backtests.v1`,
  };
}

/** Kafka headers every message carries. */
export const HEADERS = {
  eventId: 'event-id',
  eventType: 'event-type',
  deadLetterReason: 'dead-letter-reason',
  /**
   * On a dead letter: where the original was read, `topic/partition/offset`. One sent without its key and value (the
   * dead-letter topic refused the original) points at the original this way. Absent on dead letters of older releases.
   */
  deadLetterSource: 'dead-letter-source',
  /** On a command replayed from the ingest dead-letter topic by an operator: the dead letter's id, its coordinates. */
  replayOf: 'replay-of',
  /**
   * `true` on a replay the operator forced: applied even over changes stored since the command was issued. Without it
   * the moderator sets such a replay aside (`stale_replay`).
   */
  replayForce: 'replay-force',
  /**
   * `1` on an event of `vigil.events.v1` that the moderator's outbox sweep published, not the process that appended
   * it: the same event (same `event-id`) may have gone out before, so a consumer takes the path that is safe for a
   * duplicate. Absent on events published from the appending process's memory.
   */
  replayed: 'vigil-replayed',
} as const;
