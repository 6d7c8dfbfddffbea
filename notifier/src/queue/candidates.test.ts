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
    // A cap of 2 per group, stretched to 20 while less than half of the 40 in all are held.
    const held = new Candidates(40, 2);
    const kept = Array.from({ length: 21 }, (_, i) => held.keep(candidate(`dead_${i}`, 'ep_dead', 7, i)));
    expect(kept.filter(Boolean)).toHaveLength(20);
    expect(kept[20]).toBe(false);
    expect(held.keep(candidate('live_1', 'ep_live', 7))).toBe(true);
    expect(held.keep(candidate('live_2', 'ep_live', 7))).toBe(true);
    expect(held.keep(candidate('live_3', 'ep_live', 7))).toBe(false);
    expect([...(held.overflow().get(7) ?? [])].sort()).toEqual(['ep_dead', 'ep_live']);
    held.read(7);
    expect(held.overflow().has(7)).toBe(false);
  });

  it('wants an overflowing bucket read again only once a group it overflowed for has room', () => {
    const held = new Candidates(40, 2);
    for (let i = 0; i < 21; i += 1) held.keep(candidate(`dead_${i}`, 'ep_dead', 7, i));
    expect(held.wantsRead(7)).toBe(false);
    expect(held.wantsRead(8)).toBe(true);
    // Taken out but 10 (half the stretched cap): still nothing to gain from a read.
    held.take(10, 100);
    expect(held.wantsRead(7)).toBe(false);
    held.take(1, 100);
    expect(held.wantsRead(7)).toBe(true);
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
