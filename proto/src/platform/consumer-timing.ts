import type { ConsumerConfig } from 'kafkajs';

/** How a consumer group member keeps its membership (KAFKA_SESSION_TIMEOUT_MS, …), milliseconds. */
export interface ConsumerTiming {
  sessionTimeoutMs: number;
  heartbeatIntervalMs: number;
  rebalanceTimeoutMs: number;
}

/**
 * The defaults, chosen so that a replica's crash stalls no one for long and its partitions move within 10 s.
 *
 * kafkajs 2.2 has neither static membership nor cooperative rebalancing: a member that dies without leaving keeps its
 * partitions until its session expires, and when a replacement joins meanwhile, every member stops consuming in the
 * rebalance until the dead one's session expires. So the session timeout is the bound on both, and it is as short as
 * brokers allow by default (group.min.session.timeout.ms, 6 s). A member sees the rebalance at its next heartbeat
 * (1 s), so a SIGKILLed replica's partitions resume elsewhere after about 6 + 1 s plus the join.
 *
 * A 6 s session only holds if live members heartbeat often: kafkajs heartbeats between fetches when idle (hence a
 * fetch waits at most one heartbeat interval for messages, not kafkajs' 5 s), and from the batch handler when busy,
 * which `BatchHeartbeat` does on a timer while a batch is worked on. An idle consumer then makes about one fetch and
 * one heartbeat a second.
 *
 * The rebalance timeout bounds how long the group waits for a live member to finish its batch in flight and re-join;
 * one still busy past it (a slow provider call) is left out of that round and joins the next. Kept above the session
 * so that a dead member, not the rebalance timeout, ends a rebalance that waits for it.
 */
export const CONSUMER_TIMING_DEFAULTS: Readonly<ConsumerTiming> = Object.freeze({
  sessionTimeoutMs: 6000,
  heartbeatIntervalMs: 1000,
  rebalanceTimeoutMs: 10000,
});

/** The kafkajs consumer options for `timing` (see CONSUMER_TIMING_DEFAULTS for why each). */
export function consumerTimingOptions(
  timing: ConsumerTiming,
): Pick<ConsumerConfig, 'sessionTimeout' | 'heartbeatInterval' | 'rebalanceTimeout' | 'maxWaitTimeInMs'> {
  if (timing.heartbeatIntervalMs * 2 > timing.sessionTimeoutMs) {
    // kafkajs only refuses an interval not below the session; one missed heartbeat must not cost the membership.
    throw new Error(
      `the heartbeat interval (${timing.heartbeatIntervalMs} ms) must be at most half the session timeout ` +
        `(${timing.sessionTimeoutMs} ms)`,
    );
  }
  return {
    sessionTimeout: timing.sessionTimeoutMs,
    heartbeatInterval: timing.heartbeatIntervalMs,
    rebalanceTimeout: timing.rebalanceTimeoutMs,
    maxWaitTimeInMs: timing.heartbeatIntervalMs,
  };
}
