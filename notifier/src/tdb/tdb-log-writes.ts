import type { TdbSubmissionDoc } from '@vigil/proto';
import type { TdbOutcome } from '../store/tdb-store';
import { isRetriable } from '../store/store-errors';

/** Entries written in part (without the database's answer) or not at all, by id, and the store's last refusal. */
export interface LogWriteResult {
  answerless: string[];
  lost: string[];
  failure?: unknown;
}

/**
 * Writes statements' log entries with `write`, all in one command. When the store refuses that for a reason of the
 * entries' own (not being out of reach, which throws), each is written alone, then without the database's answer
 * (its refusal, its id: the text we trust least); an entry refused even so is lost. So one statement's entry never
 * loses the others of its call. Writing an entry again is safe (see TdbStore.record and recordOutcomes).
 */
export async function writeLogEntries<T>(
  entries: T[],
  idOf: (entry: T) => string,
  write: (entries: T[]) => Promise<void>,
  withoutAnswer: (entry: T) => T,
): Promise<LogWriteResult> {
  const answerless: string[] = [];
  const lost: string[] = [];
  if (entries.length === 0) return { answerless, lost };
  try {
    await write(entries);
    return { answerless, lost };
  } catch (err) {
    if (isRetriable(err)) throw err;
  }
  let failure: unknown;
  const writes = async (entry: T): Promise<boolean> => {
    try {
      await write([entry]);
      return true;
    } catch (err) {
      if (isRetriable(err)) throw err;
      failure = err;
      return false;
    }
  };
  for (const entry of entries) {
    if (await writes(entry)) continue;
    const bare = withoutAnswer(entry);
    if (bare !== entry && (await writes(bare))) answerless.push(idOf(entry));
    else lost.push(idOf(entry));
  }
  return { answerless, lost, ...(failure !== undefined ? { failure } : {}) };
}

/** A log document without the database's answer (its refusal, its id): what is left when the store refused it. */
export function docWithoutAnswer(doc: TdbSubmissionDoc): TdbSubmissionDoc {
  if (doc.rejection === undefined && doc.tdbUuid === undefined) return doc;
  const bare = { ...doc };
  delete bare.rejection;
  delete bare.tdbUuid;
  return bare;
}

/** A retry's outcome for a statement without the database's answer (its refusal, its id). */
export function outcomeWithoutAnswer<T extends { outcome: TdbOutcome }>(entry: T): T {
  const { outcome } = entry;
  if (outcome.state === 'failed' && outcome.rejection !== undefined) return { ...entry, outcome: { state: 'failed' } };
  if (outcome.state === 'submitted' && outcome.tdbUuid !== undefined) {
    return {
      ...entry,
      outcome: { state: 'submitted', ...(outcome.alreadyStored ? { alreadyStored: true } : {}) },
    };
  }
  return entry;
}
