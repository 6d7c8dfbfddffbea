/**
 * Bounds of every client input, shared by the gateway (zod schemas, hence OpenAPI) and the moderator (which checks
 * commands and gRPC calls again). Lengths are in characters (Unicode code points, as zod's `max` counts them: an emoji
 * is one) unless the name says bytes; see `characters`.
 *
 * Sizing: a whole record is at most `recordBytes` as JSON, so the event that stores it (the record, metadata merged
 * with what was stored, at most 50 keys of 40 + 500 characters, and the envelope) stays near 300 KB, well under
 * Kafka's default 1 MB message limit (`message.max.bytes`).
 */
export const LIMITS = {
  /** Record and user `clientId`. Also part of the ingest Kafka key. */
  clientId: 256,
  /** Record `name`. */
  name: 1000,
  /** Record `entity` (post, comment, message…) and each entity a rule names. */
  entity: 100,
  /** Every URL: `clientUrl`, image and external URLs, webhook endpoint URLs. */
  url: 2048,
  /** `content.text` (or the string `content`). */
  text: 100_000,
  /** `content.imageUrls` entries. */
  imageUrls: 50,
  /** `content.externalUrls` entries. */
  externalUrls: 50,
  /** A whole record (moderate or ingest body, or a user alone) as JSON, UTF-8 bytes. */
  recordBytes: 256 * 1024,
  /** User `email` (RFC 5321's path limit is 256; 320 leaves room for the rare longer one). */
  email: 320,
  /** User `name`, `username`, `paymentsAccountId`. */
  userField: 256,
  /** Metadata (records and users, spec §8): keys, key length, each value's length as JSON. */
  metadataKeys: 50,
  metadataKeyLength: 40,
  metadataValueLength: 500,
  /**
   * How deep a value may sit in metadata: `metadata.a` is at depth 1, `metadata.a.b` (or `metadata.a[0]`) at 2. The
   * moderator's rules read strings down to this depth and no further (`MAX_METADATA_DEPTH` in
   * moderator/src/engine/content.ts, checked by a test beside the moderator's metadata checks), so a deeper value is
   * refused rather than left unjudged.
   */
  metadataDepth: 16,
  /** Reasons of manual decisions (record moderation, user status, appeal decision). */
  reason: 2000,
  /** Appeal text (Iffy's 1–1000 characters). */
  appealText: 1000,
  /** A report's explanation (Art. 16 asks for a substantiated one; the TDB's `decision_facts` is at most 5,000). */
  reportExplanation: 4000,
  /** The law a notice of illegal content names (the TDB's `illegal_content_legal_ground` is free text too). */
  reportLegalGround: 500,
  /** A reporter's complaint about a decision not to act (as an appeal's text). */
  complaintText: 1000,
  /** A reporter's id: the platform's id of the end user, or a trusted flagger's id in the tenant's settings. */
  reporterId: 256,
  /** Trusted flaggers per tenant, and the length of each one's id and name. */
  trustedFlaggers: 100,
  trustedFlaggerId: 100,
  trustedFlaggerName: 200,
  /** Policies per tenant, and the length of each one's name and explanation template. */
  policies: 50,
  policyName: 200,
  policyExplanation: 2000,
  /** Rule sets (`PUT /rules`); the body limit (1 MiB by default) bounds the whole set as sent. */
  rules: 100,
  ruleName: 200,
  ruleDescription: 2000,
  /** The note a rule set version may carry (why it was written). */
  ruleVersionNote: 500,
  /**
   * Rule set versions of a tenant: version numbers run from 1 to this. Every `PUT /rules`, draft, roll-back and preset
   * added writes one; past it the write is refused (409 limit_exceeded) and the live set stays.
   */
  ruleVersions: 1000,
  /** Entities one rule applies to. */
  ruleEntities: 100,
  strategiesPerRule: 20,
  /** Blocklist words per strategy (the rule set's budget allows no more in all), and the length of each. */
  words: 1000,
  wordLength: 200,
  /** Patterns per strategy, and the length of each (source). */
  patterns: 200,
  patternLength: 500,
  /** Blocked or allowed domains per strategy, and the length of each (DNS maximum). */
  domains: 5000,
  domainLength: 253,
  /** Prompt strategies: the topic names the rule in reasons; the prompt is the tenant's policy text sent to the LLM. */
  promptTopic: 100,
  promptText: 4000,
  /** Countries whose national phone formats a `pii` strategy reads. */
  piiRegions: 20,
  /** Webhook endpoint description. */
  endpointDescription: 500,
  /** Query-string filters that are ids or client ids (`clientId`, `user`, cursors, …). */
  queryId: 256,
  /** Query-string `email` filter. */
  queryEmail: 320,
  /** Records one bulk re-run (`POST /records/moderations/rerun`) queues: a bounded number of pages and commands. */
  rerunRecords: 1000,
  /**
   * Nesting of objects and arrays in a JSON body (API bodies, the console's rule set): `{}` is one level, `{"a":[]}`
   * two. The deepest body the API takes (a record's user metadata at its own limit) needs far less.
   */
  jsonDepth: 32,
} as const;

/**
 * What one rule set may hold in all (`PUT /api/v1/rules`), whatever its rules: the per-strategy limits above bound a
 * strategy, this bounds the sum. Sized by measurement so that the heaviest rule set it admits judges a record at the
 * largest size (100,000 characters of text, 50 metadata values) in about a second of one core, well within the
 * moderation deadline (5 s), and so that validating it costs the gateway well under 200 ms:
 * - a pattern reads every field whole (a pattern that saw only the start of a field would let a word placed later pass):
 *   500 patterns of 20 instructions judge a 100,000-character text in about 330 ms, and compiling costs about 2 µs per
 *   instruction;
 * - an alternation of more than about 1,500 words leaves V8's compiled regular expressions for its interpreter, which
 *   is a thousand times slower; a whole-word blocklist that matches scans the record once per word (about 0.6 ms each);
 * - every prompt strategy is one LLM call per record.
 */
export const RULE_SET_BUDGET = {
  /** Strategies in all rules. */
  strategies: 200,
  /** Blocklist words in all strategies. */
  words: 1000,
  /** Patterns in all strategies. */
  patterns: 500,
  /** RE2 program instructions of all patterns together (see PATTERN_MAX_PROGRAM_SIZE for one). */
  patternInstructions: 10_000,
  /** Blocked and allowed domains in all strategies. */
  domains: 10_000,
  /** Prompt strategies in all rules. */
  prompts: 10,
} as const;

const tooDeep = Symbol('too deep');

/** The value's JSON text; `tooDeep` when nesting overflows the stack (a small body can nest thousands of levels). */
function serialise(value: unknown): string | undefined | typeof tooDeep {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (err instanceof RangeError) return tooDeep;
    throw err;
  }
}

/**
 * A key MongoDB cannot store as a field name as given: `.` reads as a path and a leading `$` as an operator, in the
 * event, the projection and any filter over them.
 */
function isUnsafeKey(key: string): boolean {
  return key.includes('.') || key.startsWith('$');
}

/** Path of the first key at any depth of a (JSON-sized, hence shallow) value that is unsafe; undefined when none. */
function unsafeNestedKey(value: unknown, depth = 0): string | undefined {
  if (typeof value !== 'object' || value === null || depth > 32) return undefined;
  for (const [key, inner] of Object.entries(value)) {
    if (!Array.isArray(value) && isUnsafeKey(key)) return key;
    const found = unsafeNestedKey(inner, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Whether a value holds another value more than `levels` levels below it (keys and indexes alike). */
function deeperThan(value: unknown, levels: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const inner = Object.values(value);
  if (inner.length === 0) return false;
  return levels === 0 || inner.some((item) => deeperThan(item, levels - 1));
}

/**
 * Whether a value holds an array directly inside an array (`[[1]]`), at any depth: FerretDB v1, a supported store,
 * cannot store nested arrays, so such a value would fail the write after validation passed.
 */
function hasNestedArray(value: unknown, insideArray = false, depth = 0): boolean {
  if (typeof value !== 'object' || value === null || depth > 32) return false;
  if (Array.isArray(value)) {
    if (insideArray) return true;
    return value.some((inner) => hasNestedArray(inner, true, depth + 1));
  }
  return Object.values(value).some((inner) => hasNestedArray(inner, false, depth + 1));
}

export interface MetadataIssue {
  /** The offending key, absent for the key count. */
  key?: string;
  message: string;
}

/** Characters (Unicode code points) in `text`: a surrogate pair counts once. Counted without copying the text. */
function characters(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i += 1;
    }
    count += 1;
  }
  return count;
}

/** Whether `text` has more than `max` characters (its UTF-16 length bounds the count, so most texts cost nothing). */
export function longerThan(text: string, max: number): boolean {
  return text.length > max && characters(text) > max;
}

/**
 * Every metadata problem: more than 50 keys; keys outside 1–40 characters, with `[`, `]` or `.`, or starting with `$`
 * (nested keys too); values not serialisable, longer than 500 characters as JSON (so a string's quotes and escapes
 * count, as in Iffy's `isValidMetadata`), nesting deeper than `LIMITS.metadataDepth`, or holding an array directly in
 * an array.
 */
export function metadataIssues(metadata: Record<string, unknown>): MetadataIssue[] {
  const issues: MetadataIssue[] = [];
  const keys = Object.keys(metadata);
  if (keys.length > LIMITS.metadataKeys) {
    issues.push({ message: `at most ${LIMITS.metadataKeys} keys (got ${keys.length})` });
  }
  for (const key of keys) {
    if (key.length < 1 || longerThan(key, LIMITS.metadataKeyLength)) {
      issues.push({ key, message: `keys are 1 to ${LIMITS.metadataKeyLength} characters` });
    }
    if (key.includes('[') || key.includes(']')) issues.push({ key, message: 'keys may not contain [ or ]' });
    if (isUnsafeKey(key)) issues.push({ key, message: 'keys may not contain . or start with $' });
    const serialised = serialise(metadata[key]);
    if (serialised === tooDeep) {
      issues.push({ key, message: 'value is nested too deeply' });
    } else if (serialised === undefined) {
      issues.push({ key, message: 'value must be serialisable to JSON' });
    } else if (longerThan(serialised, LIMITS.metadataValueLength)) {
      issues.push({ key, message: `values are at most ${LIMITS.metadataValueLength} characters once serialised` });
    } else if (deeperThan(metadata[key], LIMITS.metadataDepth - 1)) {
      issues.push({ key, message: `values nest at most ${LIMITS.metadataDepth} levels deep in metadata` });
    } else if (unsafeNestedKey(metadata[key]) !== undefined) {
      issues.push({ key, message: 'keys inside a value may not contain . or start with $' });
    } else if (hasNestedArray(metadata[key])) {
      issues.push({ key, message: 'values may not hold an array directly inside an array' });
    }
  }
  return issues;
}

/** UTF-8 bytes of a value's JSON text; Infinity when it cannot be serialised. */
export function jsonBytes(value: unknown): number {
  const serialised = serialise(value);
  return typeof serialised === 'string' ? Buffer.byteLength(serialised, 'utf8') : Infinity;
}
