export interface LocalMongo {
  url: string;
  kind: 'mongod' | 'ferretdb';
  port: number;
  /** PostgreSQL under FerretDB (null for mongod). */
  postgres: { url: string; port: number; logFile: string } | null;
  stop(): Promise<void>;
}
export const FERRETDB_VERSION: string;
/** Builds or installs what the chosen server needs (first run only). */
export function ensureMongo(): Promise<void>;
/** Starts a MongoDB-wire server with its data in `dir`; see mongo.js. */
export function startMongo(options: {
  dir: string;
  port?: number;
  ephemeral?: boolean;
  durable?: boolean;
  pgSettings?: Record<string, string>;
  kind?: 'mongod' | 'ferretdb';
  /** In a process group of its own: a terminal's Ctrl-C reaches only the starter, which stops it in turn. */
  detached?: boolean;
}): Promise<LocalMongo>;
export function mongoKind(): 'mongod' | 'ferretdb';
