import { isRestriction, statementOf, type DomainEvent, type GroundedStatement, type Statement } from '@vigil/proto';
import { html, type Html } from '../console/html';
import { parseMetadata } from '../routes/shared/paging.schema';

const AUTOMATED: Record<Statement['automatedDecision'], string> = {
  AUTOMATED_DECISION_FULLY: 'fully automated',
  AUTOMATED_DECISION_PARTIALLY: 'partially automated (a person upheld an automated decision)',
  AUTOMATED_DECISION_NOT_AUTOMATED: 'made by a person',
};

/**
 * The statement of reasons of the user's standing decision (the newest status change that restricts), computed from
 * the user's stored events as the API computes it.
 */
export function standingStatement(
  events: { id: string; type: string; version: number; occurredAt: string; dataJson: string }[],
  tenantId: string,
  context: { appealWindowDays: number; appealUrl: string | null },
): GroundedStatement | null {
  for (let i = events.length - 1; i >= 0; i -= 1) {
    const stored = events[i]!;
    if (stored.type !== 'UserStatusChanged') continue;
    const event = {
      id: stored.id,
      type: stored.type,
      version: stored.version,
      occurredAt: stored.occurredAt,
      tenantId,
      stream: '',
      correlationId: '',
      data: parseMetadata(stored.dataJson),
    } as unknown as DomainEvent;
    const statement = statementOf(event, context);
    return statement && isRestriction(statement) ? statement : null;
  }
  return null;
}

/** The statement as the appeal page shows it (Art. 17(3) DSA, item by item). */
export function statementSection(statement: GroundedStatement): Html {
  const { restriction } = statement;
  const what = [
    restriction.account === 'DECISION_ACCOUNT_TERMINATED' ? 'account terminated' : null,
    restriction.account === 'DECISION_ACCOUNT_SUSPENDED' ? 'account suspended' : null,
    restriction.monetary ? 'payouts paused' : null,
  ].filter((part): part is string => part !== null);
  return html`<section class="card" id="statement">
    <h2>Statement of reasons</h2>
    <dl>
      <dt>Decision</dt>
      <dd>${what.join(', ') || 'restriction'}, from ${statement.decidedAt.slice(0, 10)}, until lifted</dd>
      <dt>Facts</dt>
      <dd>${statement.facts}</dd>
      <dt>Ground</dt>
      <dd>
        ${
          statement.ground === 'DECISION_GROUND_ILLEGAL_CONTENT'
            ? `Illegal content: ${statement.legalGround ?? ''}`
            : 'Incompatible with the terms of service'
        }
        (${statement.policy.name})
      </dd>
      <dt>Explanation</dt>
      <dd>${statement.explanation}</dd>
      ${
        statement.referenceUrl
          ? html`<dt>Reference</dt>
              <dd><a href="${statement.referenceUrl}" rel="noopener noreferrer">${statement.referenceUrl}</a></dd>`
          : null
      }
      <dt>Automated means</dt>
      <dd>
        Detection: ${statement.automatedDetection ? 'automated' : 'not automated'}; decision:
        ${AUTOMATED[statement.automatedDecision]}
      </dd>
      <dt>Redress</dt>
      <dd id="redress">
        You can appeal below until ${statement.redress.appealOpenUntil.slice(0, 10)}
        (${statement.redress.appealWindowDays} days). ${statement.redress.otherRoutes}
      </dd>
    </dl>
  </section>`;
}
