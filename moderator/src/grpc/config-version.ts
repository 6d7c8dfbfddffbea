/** The version in a call's metadata value (a decimal string), or undefined when absent or malformed. */
export function parseConfigVersion(value: unknown): number | undefined {
  if (typeof value !== 'string' || !/^\d{1,15}$/.test(value)) return undefined;
  return Number(value);
}
