import pino, { type Logger } from 'pino';

/** Error fields worth logging. Everything else is dropped: driver errors carry the documents they failed to write. */
const ERROR_FIELDS = ['code', 'codeName', 'type', 'retriable', 'name'] as const;

/** Serialises `err` as its class, message, stack and a few scalar codes, and its causes the same way (depth-limited). */
export function serializeError(err: unknown, depth = 0): unknown {
  if (!(err instanceof Error)) return typeof err === 'string' ? { message: err } : { message: String(err) };
  const out: Record<string, unknown> = { type: err.constructor.name, message: err.message, stack: err.stack };
  for (const field of ERROR_FIELDS) {
    const value = (err as unknown as Record<string, unknown>)[field];
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') out[field] = value;
  }
  if (err.cause !== undefined && depth < 3) out.cause = serializeError(err.cause, depth + 1);
  return out;
}

/**
 * JSON logs: a constant message plus fields. Redaction and the error serialiser are a second line of defence; code
 * never passes content, names, emails, keys or secrets to the logger in the first place.
 */
export function createLogger(level: string, service: string): Logger {
  return pino({
    level,
    base: { service },
    serializers: { err: serializeError },
    redact: {
      paths: ['authorization', 'req.headers.authorization', '*.secret', '*.apiKey', '*.email', '*.content'],
      censor: '[redacted]',
    },
  });
}
