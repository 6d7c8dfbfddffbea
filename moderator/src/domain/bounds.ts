import { IngestRecordData, LIMITS, longerThan, UserData } from '@vigil/proto';
import type { z } from 'zod';
import { ValidationError } from './errors';

/** One problem of an input, as the gateway reports it (`details.issues`). */
interface Issue {
  path: Array<string | number>;
  message: string;
}

function check(schema: z.ZodType, input: unknown, what: string, prefix: Array<string | number> = []): void {
  const result = schema.safeParse(input);
  if (result.success) return;
  const issues: Issue[] = result.error.issues.map((issue) => ({
    path: [...prefix, ...issue.path.map((segment) => (typeof segment === 'symbol' ? String(segment) : segment))],
    message: issue.message,
  }));
  throw new ValidationError(`invalid ${what}`, { issues });
}

/**
 * The bounds of `LIMITS` for a record arriving by gRPC (ingest commands are parsed with the same schema), so the
 * moderator never stores an event larger than the gateway would accept.
 */
export function checkRecordBounds(record: z.input<typeof IngestRecordData>): void {
  check(IngestRecordData, record, 'record');
}

export function checkUserBounds(user: z.input<typeof UserData>, prefix: Array<string | number> = []): void {
  check(UserData, user, 'user', prefix);
}

/** A free-text field (reason, appeal text) against its bound. */
export function checkLength(value: string | undefined, max: number, path: string): void {
  if (value !== undefined && longerThan(value, max)) {
    throw new ValidationError(`${path} must be at most ${max} characters`, {
      issues: [{ path: [path], message: `at most ${max} characters` }],
    });
  }
}

export { LIMITS };
