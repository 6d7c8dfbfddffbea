import { inRollout } from './rollout';

const clientIds = Array.from({ length: 4000 }, (_, i) => `post-${i}`);
const share = (tenantId: string, percentage: number) =>
  clientIds.filter((clientId) => inRollout(tenantId, clientId, percentage)).length / clientIds.length;

describe('roll-out sampling', () => {
  it.each([
    [0, 0],
    [100, 1],
  ])('takes no record at %i % and every record at 100 %', (percentage, expected) => {
    expect(share('ten_a', percentage)).toBe(expected);
  });

  it.each([10, 25, 50, 90])('takes about %i % of the records', (percentage) => {
    expect(Math.abs(share('ten_a', percentage) - percentage / 100)).toBeLessThan(0.03);
  });

  it('answers the same for the same tenant and clientId every time', () => {
    const first = clientIds.map((clientId) => inRollout('ten_a', clientId, 30));
    expect(clientIds.map((clientId) => inRollout('ten_a', clientId, 30))).toEqual(first);
  });

  it('only adds records when the percentage rises', () => {
    const at10 = clientIds.filter((clientId) => inRollout('ten_a', clientId, 10));
    expect(at10.every((clientId) => inRollout('ten_a', clientId, 20))).toBe(true);
  });

  it('samples each tenant independently', () => {
    const a = clientIds.filter((clientId) => inRollout('ten_a', clientId, 50));
    const b = clientIds.filter((clientId) => inRollout('ten_b', clientId, 50));
    expect(a).not.toEqual(b);
  });
});
