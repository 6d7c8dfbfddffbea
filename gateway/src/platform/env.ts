// The environment read through a service's config schema: the service parses all of it once (`loadConfig`), a CLI
// only the variables it needs, with the same rules and defaults. Kept identical in each service
// (deploy/local/platform-copies.js).
import type { z } from 'zod';

/** Parses `env` with `schema`, frozen; throws one error that lists every bad variable. */
export function parseEnv<T extends z.ZodType>(schema: T, env: NodeJS.ProcessEnv): Readonly<z.output<T>> {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`invalid configuration:\n${lines.join('\n')}`);
  }
  return Object.freeze(parsed.data);
}
