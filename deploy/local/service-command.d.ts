/** V8 flags of every service process. */
export const SERVICE_NODE_FLAGS: string[];
/** The arguments after `node` that start `name` from its build, under the repository root `root`. */
export function serviceArgs(root: string, name: string): string[];
