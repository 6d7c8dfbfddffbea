import { Candidates, type Candidate } from './candidates';

const candidate = (id: string, group: string, bucket = 1, readyAt = 0): Candidate => ({
  id,
  tenantId: 'ten_1',
  group,
  state: 'pending',
  dueAt: readyAt,
  bucket,
  readyAt,
});

describe('Candidates', () => {
  it('leaves a group past its cap in the store, noting the bucket it overflows, while other groups still get in', () => {
    const held = new Candidates(10, 2);
    expect([1, 2, 3].map((i) => held.keep(candidate(`dead_${i}`, 'ep_dead', 7)))).toEqual([true, true, false]);
    expect(held.keep(candidate('live_1', 'ep_live', 7))).toBe(true);
    expect([...(held.overflow().get(7) ?? [])]).toEqual(['ep_dead']);
    held.read(7);
    expect(held.overflow().has(7)).toBe(false);
  });

  it('refuses past its cap in all', () => {
    const held = new Candidates(2, 10);
    expect(['a', 'b', 'c'].map((id) => held.keep(candidate(id, `ep_${id}`)))).toEqual([true, true, false]);
  });

  it('hands out what is ready, forgetting it, and replaces an older view of the same job', () => {
    const held = new Candidates(10, 10);
    held.keep(candidate('job_1', 'ep_1', 1, 100));
    held.keep(candidate('job_1', 'ep_1', 2, 50));
    expect(held.dueCount(60)).toBe(1);
    expect(held.take(5, 60).map((c) => c.bucket)).toEqual([2]);
    expect(held.dueCount(1_000)).toBe(0);
    expect(held.restore(candidate('job_1', 'ep_1', 2, 50))).toBe(true);
    expect(held.groups().map(([group, list]) => [group, list.length])).toEqual([['ep_1', 1]]);
  });
});
