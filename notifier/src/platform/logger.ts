import pino, { type Logger } from 'pino';

/**
 * JSON logs: a constant message plus fields. Redaction is a second line of defence; code never passes content,
 * names, emails, keys or secrets to the logger in the first place.
 */
export function createLogger(level: string, service: string): Logger {
  return pino({
    level,
    base: { service },
    redact: {
      paths: ['authorization', 'req.headers.authorization', '*.secret', '*.apiKey', '*.email', '*.content'],
      censor: '[redacted]',
    },
  });
}
