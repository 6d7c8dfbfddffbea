export const CHROMIUM: string;
/** The Chromium executable for the browser tests, installed with apt-get (as root) when missing; throws otherwise. */
export function ensureChromium(): string;
