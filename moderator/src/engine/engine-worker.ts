import { workerData } from 'node:worker_threads';
import type { ContentInput } from './content';
import { runLocalChecks, type LocalResult } from './local-checks';
import { CompiledRuleSets } from './rule-set';

/**
 * The engine's worker thread (run by OffLoopPool through piscina): each export is a task. State kept per worker: the
 * compiled rule sets, bounded by memory.
 */
export interface EngineWorkerData {
  /** Bytes of compiled rule sets this worker keeps (estimated, see CompiledRuleSets). */
  ruleCacheBytes: number;
}

const { ruleCacheBytes } = (workerData ?? { ruleCacheBytes: 64 * 1024 * 1024 }) as EngineWorkerData;
const ruleSets = new CompiledRuleSets(ruleCacheBytes);

export interface ChecksTask {
  /** The plan's key; `json` (the enabled rules) comes only when this worker answered `missing` for it. */
  key: string;
  json?: string;
  entity: string;
  input: ContentInput;
}

export type ChecksResult = { missing: true } | LocalResult;

/** Local strategies of one record. */
export function checks(task: ChecksTask): ChecksResult {
  const compiled = ruleSets.get(task.key, task.json);
  if (!compiled) return { missing: true };
  return runLocalChecks(compiled, task.entity, task.input);
}
