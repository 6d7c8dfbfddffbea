import type { IHeaders } from 'kafkajs';

/** A header's value as text (kafkajs gives a Buffer, a string or, for a repeated header, an array: the first). */
export function headerText(headers: IHeaders | undefined, name: string): string | undefined {
  const value = headers?.[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined ? undefined : first.toString();
}
