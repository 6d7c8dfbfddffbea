// What the moderator's engine threads need of the rules without their schemas: zod and the schemas built at import
// cost each thread about 10 MB resident. `@vigil/proto/rules` exports all of it too.
import { RE2JS } from 're2js';

/**
 * Largest compiled pattern accepted, in RE2 program instructions. Matching is linear in the input, and each character
 * costs up to this many steps; ordinary patterns stay under 100, while `\w{600}` alone is over 600.
 */
export const PATTERN_MAX_PROGRAM_SIZE = 500;

/** Backreferences and lookaround: refused by RE2, named in the refusal so that the reason is plain. */
const BACKTRACKING_ONLY = /\\[1-9]|\\k<|\(\?<?[=!]/;

/**
 * A tenant pattern compiled for RE2 (the `re2js` port): an automaton without backtracking, so matching takes time
 * linear in the input whatever the pattern, and no record can stall the moderator. RE2 syntax is that of JavaScript
 * without backreferences and lookaround (refused), and with `\x{e9}` for `\u00e9`; matching is case-insensitive
 * (Unicode case folding), `\w` `\d` `\b` are ASCII, `.` stops at `\n`, and `^` `$` anchor at the ends of the whole
 * field, as in a JavaScript pattern with the `i` flag. Used here (validation) and by the moderator (matching).
 * Throws an Error whose message is written for clients.
 */
export function compilePattern(source: string): RE2JS {
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(source, RE2JS.CASE_INSENSITIVE);
  } catch (err) {
    if (BACKTRACKING_ONLY.test(source)) {
      throw new Error('backreferences and lookaround are not supported: patterns run in linear time (RE2)');
    }
    throw new Error(err instanceof Error ? err.message : 'invalid regular expression');
  }
  if (compiled.programSize() > PATTERN_MAX_PROGRAM_SIZE) {
    throw new Error(`pattern too large: more than ${PATTERN_MAX_PROGRAM_SIZE} RE2 instructions`);
  }
  return compiled;
}

/**
 * What a `pii` strategy finds: contact details given (phone, email, a messenger or social handle with its app named,
 * a street address, a payment detail: IBAN or card number), and `asking` for them ("what's your snap").
 */
export const PII_CATEGORIES = ['phone', 'email', 'handle', 'address', 'payment', 'asking'] as const;
export type PiiCategory = (typeof PII_CATEGORIES)[number];
