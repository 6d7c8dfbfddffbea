import type { ModeratorClient } from '../../../grpc/moderator-client';
import type { BankCaller } from '../views';

// For specs: a caller whose moderator client records each call (method, request, options) and answers `answer`.

export function fakeCaller(answer: unknown): { caller: BankCaller; calls: unknown[][] } {
  const calls: unknown[][] = [];
  const moderator = {
    call: (method: string, request: unknown, options: unknown) => {
      calls.push([method, request, options]);
      return Promise.resolve(answer);
    },
  } as unknown as ModeratorClient;
  return { caller: { moderator, tenantId: 'ten_1', requestId: 'req-1' }, calls };
}
