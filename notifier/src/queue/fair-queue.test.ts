import { FairQueue } from './fair-queue';

interface Item {
  id: string;
  readyAt: number;
}

const item = (id: string, readyAt = 0): Item => ({ id, readyAt });

describe('FairQueue', () => {
  it('gives a tenant with one item a slot although another tenant holds a thousand', () => {
    const queue = new FairQueue<Item>();
    for (let i = 0; i < 1000; i += 1) queue.push('noisy', 'dead-endpoint', item(`n${i}`));
    queue.push('quiet', 'endpoint', item('q0'));
    const taken = queue.take(2, 0).map((i) => i.id);
    expect(taken).toContain('q0');
    expect(queue.size).toBe(999);
  });

  it('alternates between the groups of one tenant', () => {
    const queue = new FairQueue<Item>();
    for (const id of ['a1', 'a2', 'a3']) queue.push('t', 'a', item(id));
    for (const id of ['b1', 'b2', 'b3']) queue.push('t', 'b', item(id));
    expect(queue.take(4, 0).map((i) => i.id)).toEqual(['a1', 'b1', 'a2', 'b2']);
  });

  it('takes nothing before it is ready, in order of readiness within a group', () => {
    const queue = new FairQueue<Item>();
    queue.push('t', 'g', item('late', 200));
    queue.push('t', 'g', item('early', 100));
    expect(queue.take(5, 50)).toEqual([]);
    expect(queue.take(5, 150).map((i) => i.id)).toEqual(['early']);
    expect(queue.take(5, 250).map((i) => i.id)).toEqual(['late']);
  });

  it('passes over a group at its capacity without holding the others', () => {
    const queue = new FairQueue<Item>();
    for (const id of ['s1', 's2', 's3']) queue.push('t1', 'slow', item(id));
    queue.push('t2', 'fast', item('f1'));
    const taken = queue.take(10, 0, (group) => (group === 'slow' ? 1 : 10)).map((i) => i.id);
    expect(taken.sort()).toEqual(['f1', 's1']);
    expect(queue.size).toBe(2);
  });

  it('removes an item it still holds', () => {
    const queue = new FairQueue<Item>();
    const gone = item('gone');
    queue.push('t', 'g', gone);
    queue.push('t', 'g', item('kept'));
    queue.remove('t', 'g', gone);
    queue.remove('t', 'g', gone);
    expect(queue.take(5, 0).map((i) => i.id)).toEqual(['kept']);
  });
});
