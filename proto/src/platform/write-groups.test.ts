import { WriteGroups } from './write-groups';

/** A store stand-in whose writes finish when the test says. */
function heldWrites() {
  const groups: number[][] = [];
  const finish: Array<() => void> = [];
  const write = (items: readonly number[]) => {
    groups.push([...items]);
    return new Promise<Array<number | Error>>((resolve) => {
      finish.push(() => resolve(items.map((item) => (item < 0 ? new Error(`refused ${item}`) : item * 10))));
    });
  };
  return { groups, finish, write };
}

/** Until a group asked for now has been dispatched (a promise turn, then an event-loop turn). */
const turn = () => new Promise((resolve) => setImmediate(() => setImmediate(resolve)));

describe('WriteGroups', () => {
  it('sends what is asked for in one turn together, and what is asked for meanwhile in the next group', async () => {
    const { groups, finish, write } = heldWrites();
    const writes = new WriteGroups(write, 64);
    const first = [writes.write(1), writes.write(2)];
    await turn();
    expect(groups).toEqual([[1, 2]]);
    const second = [writes.write(3), writes.write(4), writes.write(5)];
    await turn();
    // The first group is still in flight: the next waits for it.
    expect(groups).toEqual([[1, 2]]);
    finish.shift()?.();
    expect(await Promise.all(first)).toEqual([10, 20]);
    await turn();
    expect(groups).toEqual([
      [1, 2],
      [3, 4, 5],
    ]);
    finish.shift()?.();
    expect(await Promise.all(second)).toEqual([30, 40, 50]);
  });

  it('answers each item with its own value or error, and fails a group whose write fails', async () => {
    const failing = new WriteGroups<number, number>(() => Promise.reject(new Error('store down')), 64);
    const { finish, write } = heldWrites();
    const answered = new WriteGroups(write, 64);
    const results = Promise.allSettled([answered.write(1), answered.write(-1)]);
    await turn();
    finish.shift()?.();
    const [ok, refused] = await results;
    expect(ok).toEqual({ status: 'fulfilled', value: 10 });
    expect(refused).toMatchObject({ status: 'rejected', reason: { message: 'refused -1' } });
    await expect(Promise.all([failing.write(1), failing.write(2)])).rejects.toThrow('store down');
  });

  it('splits groups at the bound', async () => {
    const { groups, finish, write } = heldWrites();
    const writes = new WriteGroups(write, 2);
    const all = Promise.all([1, 2, 3].map((item) => writes.write(item)));
    await turn();
    while (finish.length > 0) finish.shift()?.();
    await turn();
    while (finish.length > 0) finish.shift()?.();
    expect(await all).toEqual([10, 20, 30]);
    expect(groups).toEqual([[1, 2], [3]]);
  });
});
