export const STRIPE_MOCK_VERSION: string;
/** Installs stripe-mock into the cache (first run only); resolves to the binary. */
export function ensureStripeMock(): Promise<string>;
/** Starts stripe-mock (with the preview API) on a free loopback port. */
export function startStripeMock(): Promise<{ url: string; stop(): Promise<void> }>;
