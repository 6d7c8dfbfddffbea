/** Where a running `npm run up` notes its servers (removed when it stops). */
export const RUN_FILE: string;
/** The environment for an admin CLI: `env`, completed from a live `npm run up`'s note when MONGO_URL is not set. */
export function adminEnv(env?: NodeJS.ProcessEnv, runFile?: string): NodeJS.ProcessEnv;
