/** Where the PostgreSQL cluster of `dir` lives (inside it, or as root under /var/tmp); see postgres.js. */
export function dataDirFor(dir: string): string;
/** Wipes a cluster kept outside `dir` when `dir` has never run one. */
export function claimCluster(dir: string): void;
/** Removes the cluster of `dir` wherever it lives. */
export function removeCluster(dir: string): void;
