/** Whether process `pid` listens on TCP `port` (Linux /proc); undefined where that cannot be told. */
export function listensOn(pid: number, port: number): boolean | undefined;
export function freePort(): Promise<number>;
