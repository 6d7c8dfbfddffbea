export interface RouteRow {
  method: string;
  /** The path as OpenAPI writes it (`/api/v1/records/{id}`). */
  path: string;
  purpose: string;
  auth: string;
}
/** The gateway's modules the table is read from: its build by default, its sources in tests. */
export interface GatewayModules {
  app: typeof import('../../gateway/src/app');
  config: typeof import('../../gateway/src/config');
  proto: typeof import('@vigil/proto');
  pino: (options: { level: string }) => unknown;
}
export const README: string;
export const START: string;
export const END: string;
export function routes(gateway?: GatewayModules): Promise<RouteRow[]>;
export function table(rows: RouteRow[]): string;
export function updateReadme(text: string, rows: RouteRow[]): string;
export function readmeRows(text: string): RouteRow[];
export const CONSOLE_DOC: string;
/** The rows each document lists: README.md (API, public pages, admin port) and docs/console.md (console pages). */
export function byDocument(rows: RouteRow[]): Array<[string, RouteRow[]]>;
