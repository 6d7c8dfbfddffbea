// The environment read through a service's config schema: the service parses all of it once (`loadConfig`), a CLI
// only the variables it needs, with the same rules and defaults.
import { MongoClient } from 'mongodb';
import { z } from 'zod';

/** Parses `env` with `schema`, frozen; throws one error that lists every bad variable. */
function parseEnv<T extends z.ZodType>(schema: T, env: NodeJS.ProcessEnv): Readonly<z.output<T>> {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`invalid configuration:\n${lines.join('\n')}`);
  }
  return Object.freeze(parsed.data);
}

/** A service's two readers of the environment through its config schema. */
export function envLoaders<S extends z.ZodObject>(schema: S) {
  type Config = Readonly<z.output<S>>;
  return {
    /** Parses the environment once; throws one error that lists every bad variable. */
    loadConfig: (env: NodeJS.ProcessEnv = process.env): Config => parseEnv(schema, env),
    /** Only the variables `keys` names, parsed as `loadConfig` parses them: for the CLIs, which need a few. */
    loadConfigOf: <K extends keyof Config & string>(
      keys: readonly K[],
      env: NodeJS.ProcessEnv = process.env,
    ): Pick<Config, K> => {
      const mask: Record<string, true> = Object.fromEntries(keys.map((key) => [key, true]));
      // zod types a picked schema from a literal mask only; `K` types the result instead.
      return parseEnv((schema as z.ZodObject).pick(mask), env) as Pick<Config, K>;
    },
  };
}

/**
 * `MONGO_URL`, checked by the driver's own parser (scheme, hosts, ports, option names) without connecting: a value it
 * refuses stops the service at start naming the variable, instead of failing later in the composition root. The
 * driver's message is kept with any user information removed, as it may quote the string.
 */
export const MongoUrl = z
  .string()
  .min(1)
  .superRefine((value, ctx) => {
    try {
      new MongoClient(value);
    } catch (err) {
      const userInfo = /^[^:/]+:\/\/([^/]*)@/.exec(value)?.[1];
      let reason = err instanceof Error ? err.message : 'unreadable';
      if (userInfo) reason = reason.split(userInfo).join('…');
      reason = reason.replace(/\/\/[^/@\s]*@/g, '//…@');
      ctx.addIssue({ code: 'custom', message: `must be a MongoDB connection string: ${reason}` });
    }
  });
