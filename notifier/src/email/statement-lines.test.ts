import { reportComplaintDecided } from '../../../deploy/test-support/events';
import { statementOf } from '@vigil/proto';
import { statementLines } from './statement-lines';

describe('statementLines', () => {
  it('names no ground for a rejected complaint, and ends with the other routes of redress', () => {
    const event = reportComplaintDecided(
      { outcome: 'Rejected', reason: 'the shop is genuine', ground: 'ILLEGAL_CONTENT' },
      {
        tenantId: 'ten_a',
        version: 2,
        occurredAt: '2026-03-01T10:00:00.000Z',
        correlationId: 'c',
        id: '01JEVENT0000000000000000CC',
      },
    );
    const lines = statementLines(statementOf(event, { appealWindowDays: 183 })!);
    expect(lines.join('\n')).not.toContain('Ground:');
    expect(lines[lines.length - 1]).toContain('out-of-court dispute settlement body');
  });
});
