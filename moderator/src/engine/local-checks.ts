import { Content, type ContentInput } from './content';
import type { CompiledChecks } from './rule-set';

/** Reasons per rule and strategy of a plan (undefined: not local, or the rule does not apply to the entity). */
type LocalFindings = (string[] | undefined)[][];

/** What the local checks of one record found: reasons, and the spans of the text a masking strategy hides. */
export interface LocalResult {
  findings: LocalFindings;
  hidden: { start: number; end: number }[];
}

/** Runs every local strategy of the rules that apply to `entity`; the plan of the same rule set has the same order. */
export function runLocalChecks(compiled: CompiledChecks, entity: string, input: ContentInput): LocalResult {
  const content = new Content(input);
  const findings = compiled.rules.map(({ entities, checks }) => {
    if (entities && !entities.has(entity)) return [];
    return checks.map((check) => check?.(content));
  });
  return { findings, hidden: [...content.hidden] };
}
