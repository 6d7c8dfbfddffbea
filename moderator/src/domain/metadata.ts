import { ValidationError } from './errors';

export type Metadata = Record<string, unknown>;

const MAX_KEYS = 50;
const MAX_KEY_LENGTH = 40;
const MAX_VALUE_LENGTH = 500;

/** Iffy's limits (§1.11): at most 50 keys, keys 1–40 characters without `[` or `]`, values ≤ 500 characters as JSON. */
export function validateMetadata(metadata: Metadata, path: string): void {
  const keys = Object.keys(metadata);
  const issues: string[] = [];
  if (keys.length > MAX_KEYS) issues.push(`at most ${MAX_KEYS} keys`);
  for (const key of keys) {
    if (key.length < 1 || key.length > MAX_KEY_LENGTH || /[[\]]/.test(key)) {
      issues.push(`key length 1-${MAX_KEY_LENGTH} without [ or ]`);
      break;
    }
  }
  for (const value of Object.values(metadata)) {
    const json = JSON.stringify(value) as string | undefined;
    if (json === undefined || json.length > MAX_VALUE_LENGTH) {
      issues.push(`values serialisable to at most ${MAX_VALUE_LENGTH} characters`);
      break;
    }
  }
  if (issues.length > 0) throw new ValidationError('invalid metadata', { path, issues });
}

/**
 * Stripe-like update semantics (Iffy §1.11): incoming keys are merged into the stored map, a key set to `""` is
 * removed, `{}` clears everything, and absent metadata leaves the stored map alone. Unlike Iffy, values are stored as
 * given on every write (Iffy JSON-stringifies merged values, so a string changes shape on its second write).
 */
export function mergeMetadata(stored: Metadata | undefined, incoming: Metadata | undefined): Metadata | undefined {
  if (incoming === undefined) return stored;
  if (Object.keys(incoming).length === 0) return {};
  const merged: Metadata = { ...(stored ?? {}) };
  for (const [key, value] of Object.entries(incoming)) {
    if (value === '') delete merged[key];
    else merged[key] = value;
  }
  return merged;
}
