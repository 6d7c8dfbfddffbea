import type { ModeratorClient } from '../grpc/moderator-client';
import type { UseCaseDeps } from './deps';
import { decide } from './decide';

/** A moderator client that keeps each call and answers `{}`. */
function fakes() {
  const calls: Array<{ method: string; request: Record<string, unknown>; requestId?: string }> = [];
  const moderator = {
    call: (method: string, request: Record<string, unknown>, options: { requestId?: string }) => {
      calls.push({ method, request, ...(options.requestId ? { requestId: options.requestId } : {}) });
      return Promise.resolve({});
    },
  } as unknown as ModeratorClient;
  return { deps: { moderator } as Pick<UseCaseDeps, 'moderator'>, calls };
}

const decider = { tenantId: 't1', requestId: 'req_1', actor: 'member:m1' };

describe('decide', () => {
  it.each([
    ['moderateRecordManually', 'recordId', { status: 'Flagged', reason: 'r' }],
    ['setUserStatus', 'userId', { status: 'Suspended', reason: 'r' }],
    ['decideAppeal', 'appealId', { decision: 'Approved', reason: 'r' }],
    ['decideReport', 'reportId', { outcome: 'Actioned', reason: 'r' }],
    ['decideReportComplaint', 'reportId', { outcome: 'Upheld', reason: 'r' }],
  ] as const)('%s names the decided %s, the tenant and the actor', async (method, field, decision) => {
    const { deps, calls } = fakes();
    await decide(deps, decider, method, 'id_1', decision as never);
    expect(calls).toEqual([
      { method, request: { ...decision, [field]: 'id_1', tenantId: 't1', actor: 'member:m1' }, requestId: 'req_1' },
    ]);
  });
});
