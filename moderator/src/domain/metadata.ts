import { LIMITS, metadataIssues } from '@vigil/proto';
import { ValidationError } from './errors';

export type Metadata = Record<string, unknown>;

/**
 * Iffy's limits (§1.11) plus what the store needs: at most 50 keys, keys 1–40 characters without `[`, `]` or `.` and
 * not starting with `$` (nested keys too), values ≤ 500 characters as JSON and at most 16 levels deep in metadata (as
 * deep as the engine reads). The gateway applies the same rules.
 * `path` is where the metadata sits in the request (`['metadata']`, `['user', 'metadata']`).
 */
export function validateMetadata(metadata: Metadata, path: readonly string[]): void {
  const found = metadataIssues(metadata);
  if (found.length === 0) return;
  const issues = found.map((issue) => ({
    path: issue.key === undefined ? [...path] : [...path, issue.key],
    message: issue.message,
  }));
  throw new ValidationError('invalid metadata', { path: path.join('.'), issues });
}

/**
 * Stripe-like update semantics (Iffy §1.11): incoming keys are merged into the stored map, a key set to `""` is
 * removed, `{}` clears everything, and absent metadata leaves the stored map alone. Unlike Iffy, values are stored as
 * given on every write (Iffy JSON-stringifies merged values, so a string changes shape on its second write).
 * `path` is where the metadata sits in the request, for the error (a record's user: `['user', 'metadata']`).
 */
export function mergeMetadata(
  stored: Metadata | undefined,
  incoming: Metadata | undefined,
  path: readonly string[] = ['metadata'],
): Metadata | undefined {
  if (incoming === undefined) return stored;
  if (Object.keys(incoming).length === 0) return {};
  const merged: Metadata = { ...(stored ?? {}) };
  for (const [key, value] of Object.entries(incoming)) {
    if (value === '') delete merged[key];
    else merged[key] = value;
  }
  // The merged map obeys the key limit too: an update that would take it past 50 keys is refused as a whole (nothing
  // is dropped silently). A map stored above the limit before it was enforced may keep its size but not grow.
  const count = Object.keys(merged).length;
  if (count > LIMITS.metadataKeys && count > Object.keys(stored ?? {}).length) {
    const message =
      `the stored and the sent metadata together would have ${count} keys, at most ${LIMITS.metadataKeys} are ` +
      'kept: remove keys by sending them as ""';
    throw new ValidationError('invalid metadata', { path: path.join('.'), issues: [{ path: [...path], message }] });
  }
  return merged;
}
