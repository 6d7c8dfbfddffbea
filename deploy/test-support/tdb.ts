// A DSA Transparency Database for tests: the API's three endpoints (`POST /api/v1/statement`, `POST
// /api/v1/statements`, `GET /api/v1/statement/existing-puid/{puid}`) with the validation its published field list
// describes (resources/markdown/api-documentation.md and app/Http/Requests/StatementsStoreRequest.php of
// digital-services-act/transparency-database), written here from that list and not from Vigil's code, so that a
// statement Vigil builds wrongly is refused as the real database would refuse it. It records what it stored and can be
// told to fail (an outage, or a lost answer: stored, then answered 500).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';

const VISIBILITY = [
  'DECISION_VISIBILITY_CONTENT_REMOVED',
  'DECISION_VISIBILITY_CONTENT_DISABLED',
  'DECISION_VISIBILITY_CONTENT_DEMOTED',
  'DECISION_VISIBILITY_CONTENT_AGE_RESTRICTED',
  'DECISION_VISIBILITY_CONTENT_INTERACTION_RESTRICTED',
  'DECISION_VISIBILITY_CONTENT_LABELLED',
  'DECISION_VISIBILITY_OTHER',
];
const MONETARY = ['DECISION_MONETARY_SUSPENSION', 'DECISION_MONETARY_TERMINATION', 'DECISION_MONETARY_OTHER'];
const PROVISION = [
  'DECISION_PROVISION_PARTIAL_SUSPENSION',
  'DECISION_PROVISION_TOTAL_SUSPENSION',
  'DECISION_PROVISION_PARTIAL_TERMINATION',
  'DECISION_PROVISION_TOTAL_TERMINATION',
];
const ACCOUNT = ['DECISION_ACCOUNT_SUSPENDED', 'DECISION_ACCOUNT_TERMINATED'];
const ACCOUNT_TYPE = ['ACCOUNT_TYPE_BUSINESS', 'ACCOUNT_TYPE_PRIVATE'];
const GROUND = ['DECISION_GROUND_ILLEGAL_CONTENT', 'DECISION_GROUND_INCOMPATIBLE_CONTENT'];
const CONTENT_TYPE = [
  'CONTENT_TYPE_APP',
  'CONTENT_TYPE_AUDIO',
  'CONTENT_TYPE_IMAGE',
  'CONTENT_TYPE_PRODUCT',
  'CONTENT_TYPE_SYNTHETIC_MEDIA',
  'CONTENT_TYPE_TEXT',
  'CONTENT_TYPE_VIDEO',
  'CONTENT_TYPE_OTHER',
];
const CATEGORY = [
  'STATEMENT_CATEGORY_ANIMAL_WELFARE',
  'STATEMENT_CATEGORY_CONSUMER_INFORMATION',
  'STATEMENT_CATEGORY_CYBER_VIOLENCE',
  'STATEMENT_CATEGORY_CYBER_VIOLENCE_AGAINST_WOMEN',
  'STATEMENT_CATEGORY_DATA_PROTECTION_AND_PRIVACY_VIOLATIONS',
  'STATEMENT_CATEGORY_ILLEGAL_OR_HARMFUL_SPEECH',
  'STATEMENT_CATEGORY_INTELLECTUAL_PROPERTY_INFRINGEMENTS',
  'STATEMENT_CATEGORY_NEGATIVE_EFFECTS_ON_CIVIC_DISCOURSE_OR_ELECTIONS',
  'STATEMENT_CATEGORY_NOT_SPECIFIED_NOTICE',
  'STATEMENT_CATEGORY_OTHER_VIOLATION_TC',
  'STATEMENT_CATEGORY_PROTECTION_OF_MINORS',
  'STATEMENT_CATEGORY_RISK_FOR_PUBLIC_SECURITY',
  'STATEMENT_CATEGORY_SCAMS_AND_FRAUD',
  'STATEMENT_CATEGORY_SELF_HARM',
  'STATEMENT_CATEGORY_UNSAFE_AND_PROHIBITED_PRODUCTS',
  'STATEMENT_CATEGORY_VIOLENCE',
];
const COUNTRIES = 'AT BE BG CY CZ DE DK EE ES FI FR GR HR HU IE IS IT LI LT LU LV MT NL NO PL PT RO SE SI SK'.split(
  ' ',
);
const SOURCE = ['SOURCE_ARTICLE_16', 'SOURCE_TRUSTED_FLAGGER', 'SOURCE_TYPE_OTHER_NOTIFICATION', 'SOURCE_VOLUNTARY'];
const YES_NO = ['Yes', 'No'];
const AUTOMATED_DECISION = [
  'AUTOMATED_DECISION_FULLY',
  'AUTOMATED_DECISION_PARTIALLY',
  'AUTOMATED_DECISION_NOT_AUTOMATED',
];
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const PUID = /^[A-Za-z0-9_-]+$/;
const KNOWN = new Set([
  'decision_visibility',
  'decision_visibility_other',
  'decision_monetary',
  'decision_monetary_other',
  'decision_provision',
  'decision_account',
  'account_type',
  'category_specification',
  'category_specification_other',
  'decision_facts',
  'decision_ground',
  'decision_ground_reference_url',
  'illegal_content_legal_ground',
  'illegal_content_explanation',
  'incompatible_content_ground',
  'incompatible_content_explanation',
  'incompatible_content_illegal',
  'content_type',
  'content_type_other',
  'category',
  'category_addition',
  'territorial_scope',
  'content_language',
  'content_date',
  'content_id',
  'application_date',
  'end_date_account_restriction',
  'end_date_monetary_restriction',
  'end_date_service_restriction',
  'end_date_visibility_restriction',
  'source_type',
  'source_identity',
  'automated_detection',
  'automated_decision',
  'puid',
]);

export type Errors = Record<string, string[]>;

/** The database's checks of one statement, field by field; an empty object when it is accepted. */
export function validateStatement(input: unknown): Errors {
  const errors: Errors = {};
  const fail = (field: string, message: string) => (errors[field] ??= []).push(message);
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return { statement: ['must be an object'] };
  const s = input as Record<string, unknown>;
  const present = (field: string) => s[field] !== undefined && s[field] !== null && s[field] !== '';
  const text = (field: string, max: number, required: boolean) => {
    if (!present(field)) {
      if (required) fail(field, `The ${field} field is required.`);
      return;
    }
    if (typeof s[field] !== 'string') fail(field, `The ${field} must be a string.`);
    else if ([...s[field]].length > max) fail(field, `The ${field} may not be greater than ${max} characters.`);
  };
  const oneOf = (field: string, values: string[], required: boolean) => {
    if (!present(field)) {
      if (required) fail(field, `The ${field} field is required.`);
      return;
    }
    if (typeof s[field] !== 'string' || !values.includes(s[field])) fail(field, `The selected ${field} is invalid.`);
  };
  const list = (field: string, values: string[], required: boolean) => {
    if (!present(field)) {
      if (required) fail(field, `The ${field} field is required.`);
      return;
    }
    const value = s[field];
    if (!Array.isArray(value) || value.length === 0) return fail(field, `The ${field} must be a non-empty array.`);
    if (!value.every((item) => typeof item === 'string' && values.includes(item)))
      fail(field, `The selected ${field} is invalid.`);
  };
  const date = (field: string, after: string, required: boolean) => {
    if (!present(field)) {
      if (required) fail(field, `The ${field} field is required.`);
      return;
    }
    const value = s[field];
    if (typeof value !== 'string' || !DATE.test(value) || Number.isNaN(Date.parse(value))) {
      return fail(field, `The ${field} does not match the format YYYY-MM-DD.`);
    }
    if (value < after || value > '2038-01-01')
      fail(field, `The ${field} must be a date between ${after} and 2038-01-01.`);
  };
  for (const field of Object.keys(s)) if (!KNOWN.has(field)) fail(field, `The ${field} field is not known.`);

  const decisions = ['decision_visibility', 'decision_monetary', 'decision_provision', 'decision_account'];
  if (!decisions.some(present)) {
    for (const field of decisions)
      fail(field, `The ${field} field is required when none of the other decisions are present.`);
  }
  list('decision_visibility', VISIBILITY, false);
  const visibility = Array.isArray(s.decision_visibility) ? (s.decision_visibility as unknown[]) : [];
  text('decision_visibility_other', 500, visibility.includes('DECISION_VISIBILITY_OTHER'));
  oneOf('decision_monetary', MONETARY, false);
  text('decision_monetary_other', 500, s.decision_monetary === 'DECISION_MONETARY_OTHER');
  oneOf('decision_provision', PROVISION, false);
  oneOf('decision_account', ACCOUNT, false);
  oneOf('account_type', ACCOUNT_TYPE, false);

  oneOf('decision_ground', GROUND, true);
  if (present('decision_ground_reference_url')) {
    const url = s.decision_ground_reference_url;
    if (typeof url !== 'string' || !/^https?:\/\/\S+$/.test(url) || url.length > 500) {
      fail('decision_ground_reference_url', 'The decision ground reference url must be a valid URL.');
    }
  }
  const illegal = s.decision_ground === 'DECISION_GROUND_ILLEGAL_CONTENT';
  const incompatible = s.decision_ground === 'DECISION_GROUND_INCOMPATIBLE_CONTENT';
  text('illegal_content_legal_ground', 500, illegal);
  text('illegal_content_explanation', 2000, illegal);
  text('incompatible_content_ground', 500, incompatible);
  text('incompatible_content_explanation', 2000, incompatible);
  oneOf('incompatible_content_illegal', YES_NO, false);

  list('content_type', CONTENT_TYPE, true);
  const contentType = Array.isArray(s.content_type) ? (s.content_type as unknown[]) : [];
  text('content_type_other', 500, contentType.includes('CONTENT_TYPE_OTHER'));
  oneOf('category', CATEGORY, true);
  if (present('category_addition')) list('category_addition', CATEGORY, false);
  list('territorial_scope', COUNTRIES, true);
  if (
    present('content_language') &&
    (typeof s.content_language !== 'string' || !/^[A-Z]{2}$/.test(s.content_language))
  ) {
    fail('content_language', 'The selected content language is invalid.');
  }
  date('content_date', '2000-01-01', true);
  date('application_date', '2020-01-01', true);
  for (const end of ['account', 'monetary', 'service', 'visibility'])
    date(`end_date_${end}_restriction`, '2020-01-01', false);

  text('decision_facts', 5000, true);
  oneOf('source_type', SOURCE, true);
  text('source_identity', 500, false);
  oneOf('automated_detection', YES_NO, true);
  oneOf('automated_decision', AUTOMATED_DECISION, true);
  text('puid', 500, true);
  if (typeof s.puid === 'string' && !PUID.test(s.puid)) {
    fail('puid', 'The puid may only contain letters, numbers, dashes and underscores.');
  }
  return errors;
}

export interface TdbCall {
  method: string;
  path: string;
  status: number;
  /** Statements in a `POST /api/v1/statements` body. */
  batchSize?: number;
  authorized: boolean;
}

export interface StoredStatement {
  uuid: string;
  /** When it was stored (epoch ms): a benchmark's rate. */
  at: number;
  platform: string;
  statement: Record<string, unknown>;
}

export interface TdbServer {
  url: string;
  /** A token the server accepts, for `platform` (puids are unique per platform). */
  tokenFor(platform: string): string;
  calls: TdbCall[];
  /** Every statement stored, in order. */
  stored: StoredStatement[];
  /** Every statement any call carried that the server refused (it should stay empty in Vigil's tests). */
  refused: Array<{ statement: unknown; errors: Errors }>;
  /** The puid of every statement a call carried again after it was stored (refused as not unique), once per call. */
  repeats: string[];
  /** The next `n` calls are answered 503 without storing anything. */
  failNext(n: number): void;
  /** The next batch call stores its statements, then answers 500 (an answer lost on the way back). */
  loseNextAnswer(): void;
  /**
   * Every batch call of `platform` is refused (422, nothing stored), each statement with `fields`: messages worded as
   * the test needs, as a database under change might word them.
   */
  refuseFor(platform: string, fields: Errors): void;
  close(): Promise<void>;
}

const MAX_BODY = 16 * 1024 * 1024;

export async function startTdb(): Promise<TdbServer> {
  const tokens = new Map<string, string>();
  const calls: TdbCall[] = [];
  const stored: StoredStatement[] = [];
  const refused: TdbServer['refused'] = [];
  const repeats: string[] = [];
  const puids = new Map<string, StoredStatement>();
  let failing = 0;
  let loseAnswer = false;
  const refusing = new Map<string, Errors>();

  const send = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };

  const store = (platform: string, statement: Record<string, unknown>): StoredStatement => {
    const entry = { uuid: randomUUID(), at: Date.now(), platform, statement };
    stored.push(entry);
    puids.set(`${platform}\0${statement.puid as string}`, entry);
    return entry;
  };

  /** The checks, plus the puid's uniqueness within the platform (also within the same call). */
  const check = (platform: string, statement: unknown, seen: Set<string>): Errors => {
    const errors = validateStatement(statement);
    const puid = (statement as { puid?: unknown })?.puid;
    if (typeof puid === 'string' && !errors.puid) {
      const known = puids.has(`${platform}\0${puid}`);
      if (known || seen.has(puid)) {
        errors.puid = ['The identifier given is not unique within this platform.'];
      }
      if (known) repeats.push(puid);
      seen.add(puid);
    }
    return errors;
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0]!;
      const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const platform = auth === undefined ? undefined : tokens.get(auth);
      const call: TdbCall = { method: req.method ?? 'GET', path, status: 0, authorized: platform !== undefined };
      calls.push(call);
      const answer = (status: number, body: unknown) => {
        call.status = status;
        send(res, status, body);
      };
      if (failing > 0) {
        failing -= 1;
        return answer(503, { message: 'Service Unavailable' });
      }
      if (platform === undefined) return answer(401, { message: 'Unauthenticated.' });
      if (size > MAX_BODY) return answer(413, { message: 'Payload Too Large' });
      const existing = /^\/api\/v1\/statement\/existing-puid\/([^/]+)$/.exec(path);
      if (req.method === 'GET' && existing) {
        const puid = decodeURIComponent(existing[1]!);
        return puids.has(`${platform}\0${puid}`)
          ? answer(302, { message: 'statement of reason found', puid })
          : answer(404, { message: 'statement of reason not found', puid });
      }
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return answer(422, { message: 'The given data was invalid.', errors: { body: ['invalid JSON'] } });
      }
      if (req.method === 'POST' && path === '/api/v1/statement') {
        const errors = check(platform, body, new Set());
        if (Object.keys(errors).length > 0) {
          if (!errors.puid || Object.keys(errors).length > 1) refused.push({ statement: body, errors });
          return answer(422, { message: Object.values(errors)[0]![0], errors });
        }
        const entry = store(platform, body as Record<string, unknown>);
        return answer(201, { ...(body as object), uuid: entry.uuid, puid: (body as { puid: string }).puid });
      }
      if (req.method === 'POST' && path === '/api/v1/statements') {
        const statements = (body as { statements?: unknown })?.statements;
        if (!Array.isArray(statements) || statements.length === 0) {
          return answer(422, { message: 'The statements field is required.', errors: { statements: ['required'] } });
        }
        call.batchSize = statements.length;
        const refusal = refusing.get(platform);
        if (refusal) {
          return answer(422, {
            message: 'The given data was invalid.',
            errors: Object.fromEntries(statements.map((_, index) => [`statement_${index}`, refusal])),
          });
        }
        if (statements.length > 100) {
          return answer(422, {
            message: 'The statements may not have more than 100 items.',
            errors: { statements: ['The statements may not have more than 100 items.'] },
          });
        }
        const seen = new Set<string>();
        const errors: Record<string, Errors> = {};
        statements.forEach((statement, index) => {
          const found = check(platform, statement, seen);
          if (Object.keys(found).length > 0) {
            errors[`statement_${index}`] = found;
            // A duplicate puid alone is the caller's retry, not a statement built wrongly.
            if (!found.puid || Object.keys(found).length > 1) refused.push({ statement, errors: found });
          }
        });
        // Any error: none of the call's statements is stored.
        if (Object.keys(errors).length > 0) return answer(422, { errors });
        const created = statements.map((statement) => {
          const entry = store(platform, statement as Record<string, unknown>);
          return { ...(statement as object), uuid: entry.uuid };
        });
        if (loseAnswer) {
          loseAnswer = false;
          return answer(500, { message: 'Server Error' });
        }
        return answer(201, { statements: created });
      }
      return answer(404, { message: 'Not Found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    tokenFor(platform) {
      const token = `${Math.floor(Math.random() * 1000)}|${randomUUID().replace(/-/g, '')}`;
      tokens.set(token, platform);
      return token;
    },
    calls,
    stored,
    refused,
    repeats,
    failNext(n) {
      failing = n;
    },
    loseNextAnswer() {
      loseAnswer = true;
    },
    refuseFor(platform, fields) {
      refusing.set(platform, fields);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
