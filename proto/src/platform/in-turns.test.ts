import { mapInTurns } from './in-turns';

describe('mapInTurns', () => {
  it('keeps at most `limit` in flight and answers in the items order', async () => {
    let inFlight = 0;
    let most = 0;
    const results = await mapInTurns([5, 1, 4, 2, 3], 2, async (n) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setImmediate(resolve));
      inFlight -= 1;
      return n * 10;
    });
    expect(results).toEqual([50, 10, 40, 20, 30]);
    expect(most).toBe(2);
  });

  it('works every item, then throws the first failure', async () => {
    const worked: number[] = [];
    const run = mapInTurns([1, 2, 3], 1, (n) => {
      worked.push(n);
      return n === 2 ? Promise.reject(new Error('two')) : Promise.resolve(n);
    });
    await expect(run).rejects.toThrow('two');
    expect(worked).toEqual([1, 2, 3]);
  });
});
