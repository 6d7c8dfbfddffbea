// The Transparency Database token a tenant gives the gateway, and how the API shows it.
import { z } from 'zod';

/** A token as shown: its length and last four characters. */
export const maskToken = (token: string): string => `…${token.slice(-4)} (${token.length} characters)`;

/** A token as the database generates it (`X|ybqk…`): printable, without spaces. */
export const TdbToken = z
  .string()
  .min(8)
  .max(512)
  .regex(/^[\x21-\x7e]+$/, 'printable characters without spaces');
