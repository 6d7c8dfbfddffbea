// The types of postgres.js, for the TypeScript tests and the scripts type-checked with JSDoc (tsconfig.deploy.json):
// both read this file instead of postgres.js.
import type { ChildProcess } from 'node:child_process';

export const PG_PACKAGE_VERSION: string;
/** The database FerretDB keeps its data in. */
export const PG_DATABASE: string;
/** Installs the binaries into the cache on the first run; resolves to where they are. */
export function ensurePostgres(): Promise<string>;
/** Starts PostgreSQL for `dir` (initialising the cluster on first use); see postgres.js. */
export function startPostgres(options: {
  dir: string;
  ephemeral?: boolean;
  durable?: boolean;
  settings?: Record<string, string>;
  detached?: boolean;
}): Promise<{ url: string; port: number; logFile: string; process: ChildProcess; stop(): Promise<void> }>;
/** Where the PostgreSQL cluster of `dir` lives (inside it, or as root under /var/tmp); see postgres.js. */
export function dataDirFor(dir: string): string;
/** Wipes a cluster kept outside `dir` when `dir` has never run one. */
export function claimCluster(dir: string): void;
/** Removes the cluster of `dir` wherever it lives. */
export function removeCluster(dir: string): void;
