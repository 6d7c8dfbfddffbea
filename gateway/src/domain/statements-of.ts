import { statementOf, type DomainEvent, type Statement, type StatementContext } from '@vigil/proto';

/** The statements of a stream's events, oldest first. */
export function statementsOf(events: readonly DomainEvent[], context: StatementContext): Statement[] {
  return events.map((event) => statementOf(event, context)).filter((s): s is Statement => s !== null);
}
