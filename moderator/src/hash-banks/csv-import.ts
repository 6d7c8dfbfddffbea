import { parse } from 'csv-parse/sync';
import { HASH_BANK_LIMITS, type HashKind, type HashMetadata } from '@vigil/proto';
import { HASH_PATTERN } from './bank-rules';
import { ValidationError } from '../domain/errors';

/** One row of an import: the hash (lowercase) and its metadata. */
export interface ImportRow {
  value: string;
  metadata: HashMetadata;
}

/** Errors listed at most: a file with thousands of bad rows answers with the first ones. */
const MAX_ISSUES = 50;

/**
 * The rows of a hash file as HMA and ThreatExchange's tools write them: one hash a row, in the first column, and
 * optional metadata columns. A first row whose first cell is not a hash of the bank's kind is a header naming the
 * columns (the metadata keys); without one, the extra columns are `col2`, `col3`, …. Blank lines and lines starting
 * with `#` are skipped. Any bad row fails the whole import with every issue named by its 1-based line number, so a
 * file is taken entirely or not at all.
 */
export function parseHashCsv(text: string, kind: HashKind): ImportRow[] {
  if (text.length > HASH_BANK_LIMITS.importChars) {
    throw new ValidationError(`an import is at most ${HASH_BANK_LIMITS.importChars} characters`, {
      issues: [{ path: ['csv'], message: `at most ${HASH_BANK_LIMITS.importChars} characters` }],
    });
  }
  let records: { record: string[]; line: number }[];
  try {
    records = (
      parse(text, {
        bom: true,
        comment: '#',
        comment_no_infix: true,
        skip_empty_lines: true,
        relax_column_count: true,
        trim: true,
        info: true,
        max_record_size: 64 * 1024,
      }) as unknown as { record: string[]; info: { lines: number } }[]
    ).map(({ record, info }) => ({ record, line: info.lines }));
  } catch (err) {
    const line = (err as { lines?: unknown }).lines;
    const where = typeof line === 'number' ? ['csv', line] : ['csv'];
    throw new ValidationError('the file is not valid CSV', {
      issues: [{ path: where, message: 'not valid CSV (unbalanced quotes or an over-long row)' }],
    });
  }
  const pattern = HASH_PATTERN[kind];
  let names: string[] | undefined;
  const first = records[0];
  if (first && !pattern.test((first.record[0] ?? '').toLowerCase())) {
    names = first.record;
    records = records.slice(1);
  }
  if (records.length > HASH_BANK_LIMITS.importRows) {
    throw new ValidationError(`an import is at most ${HASH_BANK_LIMITS.importRows} rows`, {
      issues: [{ path: ['csv'], message: `at most ${HASH_BANK_LIMITS.importRows} rows (got ${records.length})` }],
    });
  }
  const issues: { path: (string | number)[]; message: string }[] = [];
  const rows: ImportRow[] = [];
  for (const { record, line } of records) {
    const problem = (message: string) => issues.length < MAX_ISSUES && issues.push({ path: ['csv', line], message });
    const value = (record[0] ?? '').toLowerCase();
    if (!pattern.test(value)) {
      problem(`line ${line}: not a ${kind} hash (${hashForm(kind)})`);
      continue;
    }
    const metadata: HashMetadata = {};
    let ok = true;
    record.slice(1).forEach((cell, index) => {
      if (cell === '') return;
      const key = names?.[index + 1] || `col${index + 2}`;
      if (key.length > HASH_BANK_LIMITS.metadataKeyLength) {
        ok = false;
        problem(`line ${line}: column name over ${HASH_BANK_LIMITS.metadataKeyLength} characters`);
      } else if (cell.length > HASH_BANK_LIMITS.metadataValueLength) {
        ok = false;
        problem(`line ${line}: ${key} over ${HASH_BANK_LIMITS.metadataValueLength} characters`);
      } else {
        metadata[key] = cell;
      }
    });
    if (Object.keys(metadata).length > HASH_BANK_LIMITS.metadataKeys) {
      ok = false;
      problem(`line ${line}: at most ${HASH_BANK_LIMITS.metadataKeys} metadata columns`);
    }
    if (ok) rows.push({ value, metadata });
  }
  if (issues.length > 0) {
    throw new ValidationError(`${issues.length === MAX_ISSUES ? 'at least ' : ''}${issues.length} bad rows`, {
      issues,
    });
  }
  if (rows.length === 0) {
    throw new ValidationError('the file holds no hashes', { issues: [{ path: ['csv'], message: 'no hashes' }] });
  }
  return rows;
}

const hashForm = (kind: HashKind): string => (kind === 'md5' ? '32 hex digits' : '64 hex digits');
