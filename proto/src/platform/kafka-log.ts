// kafkajs logs through pino: its errors and warnings (a broker unreachable, a crashed consumer) reach the service's
// log with the level they had, except the steps of a routine group rebalance, which kafkajs logs as errors and which
// are lowered here (ROUTINE).
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

type Method = (typeof LEVELS)[keyof typeof LEVELS];

/**
 * Broker error codes met in every rebalance, with the level they are logged at. kafkajs' connection logs each error
 * response at error level ("Response Heartbeat(key: 12, …)" with the code's text as `error`), and its consumer then
 * handles them by re-joining: a member joining or leaving (a deploy, a restart, a crash) makes the others' heartbeats
 * and commits answer REBALANCE_IN_PROGRESS or ILLEGAL_GENERATION, and a new member's first JoinGroup
 * MEMBER_ID_REQUIRED. An alert on error-level lines would fire at every rollout. Coordinator moves (a broker restart)
 * and a member dropped for a missed session stay visible as warnings.
 */
const ROUTINE_CODES: Readonly<Record<string, Method>> = {
  REBALANCE_IN_PROGRESS: 'info',
  ILLEGAL_GENERATION: 'info',
  MEMBER_ID_REQUIRED: 'info',
  UNKNOWN_MEMBER_ID: 'warn',
  NOT_COORDINATOR_FOR_GROUP: 'warn',
  GROUP_COORDINATOR_NOT_AVAILABLE: 'warn',
  GROUP_LOAD_IN_PROGRESS: 'warn',
  NOT_LEADER_FOR_PARTITION: 'warn',
  LEADER_NOT_AVAILABLE: 'warn',
};

/**
 * The codes' texts as kafkajs words them, from its own table (a deep import: its entry point does not export it), so
 * an entry is recognised by the code it carries rather than by a pattern over free text.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { errorCodes } = require('kafkajs/src/protocol/error.js') as { errorCodes: { type: string; message: string }[] };
const ROUTINE_ERRORS = new Map<string, Method>(
  errorCodes.flatMap(({ type, message }) => {
    const method = ROUTINE_CODES[type];
    return method ? [[message, method] as const] : [];
  }),
);

/** kafkajs' own messages about the same steps (runner.js), at the level they deserve. */
const ROUTINE_MESSAGES: ReadonlyMap<string, Method> = new Map([
  ['The group is rebalancing, re-joining', 'info'],
  ['The coordinator is not aware of this member, re-joining the group', 'warn'],
]);

const RANK: Readonly<Record<Method, number>> = { debug: 0, info: 1, warn: 2, error: 3 };

/** The level of an entry: kafkajs' own, lowered (never raised) for the steps of a routine rebalance. */
function methodOf(method: Method, message: unknown, error: unknown): Method {
  const routine =
    (typeof message === 'string' ? ROUTINE_MESSAGES.get(message) : undefined) ??
    (typeof error === 'string' ? ROUTINE_ERRORS.get(error) : undefined);
  return routine !== undefined && RANK[routine] < RANK[method] ? routine : method;
}

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
      const given = LEVELS[level as keyof typeof LEVELS];
      if (!given) return;
      const method = methodOf(given, entry.message, entry.error);
      if (!kafkaLog.isLevelEnabled(method)) return;
      const fields: Record<string, unknown> = { namespace };
      for (const field of FIELDS) {
        const value: unknown = entry[field];
        if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') fields[field] = value;
      }
      kafkaLog[method](fields, entry.message);
    };
}
