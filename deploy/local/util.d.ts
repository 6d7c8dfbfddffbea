// The types of util.js, for the TypeScript tests and the scripts type-checked with JSDoc (tsconfig.deploy.json):
// both read this file instead of util.js.
import type { ChildProcess, SpawnOptions } from 'node:child_process';

/** The repository root. */
export const ROOT: string;
/** Where downloads and built tools are kept between runs (VIGIL_CACHE_DIR, or ~/.cache/vigil). */
export const CACHE_DIR: string;
export function say(message: string): void;
/** Resolves to a TCP port that was free a moment ago. */
export function freePort(): Promise<number>;
export function canConnect(port: number, host?: string): Promise<boolean>;
/** Whether process `pid` listens on TCP `port` (Linux /proc); undefined where that cannot be told. */
export function listensOn(pid: number, port: number): boolean | undefined;
/** Whether `child` itself (not another process on the same port) accepts connections on `port`. */
export function childListens(child: ChildProcess, port: number): Promise<boolean>;
/** Polls `check` until it returns true, or fails after `timeoutMs` with `what` in the message. */
export function waitUntil(
  check: () => boolean | Promise<boolean>,
  options: { timeoutMs: number; intervalMs?: number; what: string },
): Promise<void>;
/** Runs a command to completion, resolving to its output's tail; rejects with it on a non-zero exit. */
export function run(command: string, args: string[], options?: SpawnOptions & { echo?: boolean }): Promise<string>;
/** Whether an executable is on PATH. */
export function onPath(name: string): boolean;
/** Stops a child process: SIGTERM, then SIGKILL after `graceMs`. Resolves once it has exited. */
export function stopProcess(child: ChildProcess | null | undefined, graceMs?: number): Promise<void>;
/**
 * Spawns the server `name` with its output appended to `logFile`, and resolves once `ready(child)` holds. If it exits
 * first, or `timeoutMs` passes, it is stopped and the start rejects, naming the log.
 */
export function startServer(
  command: string,
  args: string[],
  options: {
    name: string;
    port: number;
    logFile: string;
    detached?: boolean;
    env?: NodeJS.ProcessEnv;
    timeoutMs: number;
    ready: (child: ChildProcess) => boolean | Promise<boolean>;
  },
): Promise<ChildProcess>;
