import type { Statement } from '@vigil/proto';

/** The statement as plain text lines, for emails and pages. */
export function statementLines(statement: Statement): string[] {
  const lines = [statement.facts];
  // A rejected complaint restricted nothing: it rests on no ground.
  if (statement.ground !== undefined) {
    lines.push(
      `Ground: ${statement.ground === 'DECISION_GROUND_ILLEGAL_CONTENT' ? `illegal content (${statement.legalGround ?? ''})` : 'incompatible with the terms of service'}.`,
    );
  }
  lines.push(statement.explanation);
  if (statement.referenceUrl) lines.push(`Reference: ${statement.referenceUrl}`);
  lines.push(
    `Automated detection: ${statement.automatedDetection ? 'yes' : 'no'}. Automated decision: ${
      {
        AUTOMATED_DECISION_FULLY: 'fully',
        AUTOMATED_DECISION_PARTIALLY: 'partially',
        AUTOMATED_DECISION_NOT_AUTOMATED: 'no',
      }[statement.automatedDecision]
    }.`,
    statement.kind === 'complaint'
      ? statement.redress.otherRoutes
      : `You can appeal this decision until ${statement.redress.appealOpenUntil.slice(0, 10)} (${statement.redress.appealWindowDays} days). ${statement.redress.otherRoutes}`,
  );
  return lines;
}
