export const SERVICES: string[];
/** Files every service's src/platform/ must have. */
export const REQUIRED: string[];
/** Problems found under `root` (default: this repository), one line each; empty when the copies agree. */
export function platformCopyProblems(root?: string): string[];
