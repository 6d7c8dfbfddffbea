// kafkajs logs through pino: its errors and warnings (a broker unreachable, a rebalance, a crashed consumer) reach the
// service's log with the level they had. Kept identical in each service (deploy/local/platform-copies.js).
import { logLevel, type logCreator } from 'kafkajs';
import type { Logger } from 'pino';

/**
 * The fields of a kafkajs entry that are kept: where and what, never a message's key, value or headers (kafkajs can
 * put request and response buffers in debug entries). Everything else is dropped.
 */
const FIELDS = ['broker', 'clientId', 'groupId', 'memberId', 'topic', 'partition', 'retryCount', 'retryTime', 'error'];

const LEVELS = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
} as const satisfies Partial<Record<logLevel, string>>;

/** The kafkajs level that lets through what `log`'s level prints, and no more (kafkajs skips the rest unbuilt). */
export function kafkaLogLevel(log: Logger): logLevel {
  if (log.isLevelEnabled('debug')) return logLevel.DEBUG;
  if (log.isLevelEnabled('info')) return logLevel.INFO;
  if (log.isLevelEnabled('warn')) return logLevel.WARN;
  if (log.isLevelEnabled('error')) return logLevel.ERROR;
  return logLevel.NOTHING;
}

/** A kafkajs `logCreator` writing to `log`, under `component: kafkajs` and kafkajs' namespace. */
export function kafkaLogCreator(log: Logger): logCreator {
  const kafkaLog = log.child({ component: 'kafkajs' });
  return () =>
    ({ namespace, level, log: entry }) => {
      const method = LEVELS[level as keyof typeof LEVELS];
      if (!method) return;
      const fields: Record<string, unknown> = { namespace };
      for (const field of FIELDS) {
        const value: unknown = entry[field];
        if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') fields[field] = value;
      }
      kafkaLog[method](fields, entry.message);
    };
}
