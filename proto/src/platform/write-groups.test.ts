import { Gathering } from './gathering';
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

describe('WriteGroups with a Gathering', () => {
  /** A writer `run` started: it writes `item` when the test says, or ends without writing. */
  function writer(gathering: Gathering, writes: WriteGroups<number, number>, item: number) {
    let go!: (write: boolean) => void;
    const decided = new Promise<boolean>((resolve) => (go = resolve));
    const done = gathering.run(async () => ((await decided) ? writes.write(item) : undefined));
    return { write: () => go(true), end: () => go(false), done };
  }

  /** Held writes grouped under a Gathering of `maxWaitMs`, and writers of it (see `writer`). */
  function gathered(maxWaitMs: number) {
    const held = heldWrites();
    const gathering = new Gathering(maxWaitMs);
    const writes = new WriteGroups(held.write, 64, gathering);
    return { ...held, writes, spawn: (item: number) => writer(gathering, writes, item) };
  }

  /** Until `check` holds, within a deadline that holds under load. */
  async function until(check: () => boolean): Promise<void> {
    const deadline = Date.now() + 5000;
    while (!check()) {
      if (Date.now() > deadline) throw new Error('condition not met in time');
      await turn();
    }
  }

  it('waits for the writers still on their way, and sends them in one group', async () => {
    const { groups, finish, spawn } = gathered(60_000);
    const [a, b, c] = [1, 2, 3].map(spawn);
    a!.write();
    await turn();
    await turn();
    expect(groups).toEqual([]);
    b!.write();
    await turn();
    expect(groups).toEqual([]);
    c!.write();
    await until(() => groups.length === 1);
    expect(groups).toEqual([[1, 2, 3]]);
    finish.shift()?.();
    expect(await Promise.all([a!.done, b!.done, c!.done])).toEqual([10, 20, 30]);
  });

  it('stops waiting for a writer that ends without writing', async () => {
    const { groups, finish, spawn } = gathered(60_000);
    const [a, b] = [1, 2].map(spawn);
    a!.write();
    await turn();
    expect(groups).toEqual([]);
    b!.end();
    await until(() => groups.length === 1);
    expect(groups).toEqual([[1]]);
    finish.shift()?.();
    expect(await a!.done).toBe(10);
  });

  it('sends a writer alone at once, and waits for others only as long as the bound', async () => {
    const { groups, finish, spawn } = gathered(50);
    const alone = spawn(1);
    alone.write();
    await until(() => groups.length === 1);
    finish.shift()?.();
    expect(await alone.done).toBe(10);

    const [a, late] = [2, 3].map(spawn);
    const opened = Date.now();
    a!.write();
    await until(() => groups.length === 2);
    expect(Date.now() - opened).toBeGreaterThanOrEqual(45);
    expect(groups[1]).toEqual([2]);
    finish.shift()?.();
    expect(await a!.done).toBe(20);
    late!.end();
    await late!.done;
  });

  it('stops waiting for a writer once the bound has passed since it started', async () => {
    const { groups, finish, spawn } = gathered(400);
    const slow = spawn(1);
    const started = Date.now();
    await until(() => Date.now() - started >= 300);
    const a = spawn(2);
    a.write();
    // The group opened about 300 ms after the slow writer started: it waits until 400 ms after that start, not 400 ms
    // after its own opening.
    await until(() => groups.length === 1);
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(395);
    expect(waited).toBeLessThan(650);
    expect(groups).toEqual([[2]]);
    finish.shift()?.();
    expect(await a.done).toBe(20);
    slow.end();
    await slow.done;
  });

  it('does not hold a group that a write of another caller joined', async () => {
    const { groups, finish, writes, spawn } = gathered(60_000);
    const [a, b] = [1, 2].map(spawn);
    a!.write();
    await turn();
    expect(groups).toEqual([]);
    const other = writes.write(9);
    await until(() => groups.length === 1);
    expect(groups).toEqual([[1, 9]]);
    finish.shift()?.();
    expect(await Promise.all([a!.done, other])).toEqual([10, 90]);
    b!.end();
    await b!.done;
  });
});
