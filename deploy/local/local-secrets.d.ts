export class StartError extends Error {}
/** Records the secrets' fingerprint in `dbName` on first use; throws StartError when the store holds another. */
export function checkSecretsMatchData(mongoUrl: string, dbName: string, secrets: string[]): Promise<void>;
