/**
 * Broker answers that refuse a produce because of what is in the message, not because the broker or the topic is
 * unavailable: sending the same message again can never succeed, while every other message still can. kafkajs marks
 * them non-retriable and bails with the protocol error (`type` is the broker's error name).
 *
 * Other non-retriable errors (authorization, an unknown producer id, a sequence out of order) describe the topic or the
 * producer, not one message: setting the message aside for them would set aside every message, so they are retried.
 */
const MESSAGE_REJECTIONS = {
  MESSAGE_TOO_LARGE: 'message_too_large',
  RECORD_LIST_TOO_LARGE: 'message_too_large',
  INVALID_RECORD: 'invalid_record',
} as const;

/** The bounded reasons `messageRejection` returns (metric labels). */
export type RejectionReason = (typeof MESSAGE_REJECTIONS)[keyof typeof MESSAGE_REJECTIONS];

/** The reason the broker refused this message for good, or undefined when the failure is not about the message. */
export function messageRejection(err: unknown): RejectionReason | undefined {
  for (let current: unknown = err, depth = 0; current && depth < 5; depth += 1) {
    const { type, retriable, cause } = current as { type?: unknown; retriable?: unknown; cause?: unknown };
    if (typeof type === 'string' && retriable === false && Object.hasOwn(MESSAGE_REJECTIONS, type)) {
      return MESSAGE_REJECTIONS[type as keyof typeof MESSAGE_REJECTIONS];
    }
    current = cause;
  }
  return undefined;
}

/** kafkajs marks transient failures (leader moved, broker away) `retriable`. */
export function isKafkaRetriable(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { retriable?: unknown }).retriable === true;
}
