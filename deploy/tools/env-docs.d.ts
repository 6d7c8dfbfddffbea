export interface Variable {
  name: string;
  /** Source text of the zod default, quotes removed; undefined when none. */
  default: string | undefined;
  required: boolean;
  meaning: string;
}
export const SERVICES: readonly ['gateway', 'moderator', 'notifier'];
export const README: string;
export function variables(service: string): Variable[];
export function table(service: string): string;
export function updateReadme(text: string): string;
