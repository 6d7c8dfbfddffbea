import { BatchHeartbeat } from './batch-heartbeat';

describe('BatchHeartbeat', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  /** Work that ends when `finish` is called; the test moves the clock meanwhile. */
  function pendingWork() {
    let finish!: (value: string) => void;
    let fail!: (err: Error) => void;
    const done = new Promise<string>((resolve, reject) => {
      finish = resolve;
      fail = reject;
    });
    return { done, finish, fail };
  }

  it('heartbeats every interval while the work runs, and stops when it ends', async () => {
    const heartbeat = jest.fn(() => Promise.resolve());
    const work = pendingWork();
    const running = BatchHeartbeat.run(heartbeat, 1000, () => work.done);
    await jest.advanceTimersByTimeAsync(3500);
    expect(heartbeat).toHaveBeenCalledTimes(3);
    work.finish('handled');
    await expect(running).resolves.toBe('handled');
    await jest.advanceTimersByTimeAsync(5000);
    expect(heartbeat).toHaveBeenCalledTimes(3);
  });

  it('tells the work that a heartbeat failed, and throws that failure when the work ends', async () => {
    const rebalancing = Object.assign(new Error('The group is rebalancing, so a rejoin is needed'), {
      type: 'REBALANCE_IN_PROGRESS',
    });
    const heartbeat = jest.fn().mockResolvedValueOnce(undefined).mockRejectedValue(rebalancing);
    const work = pendingWork();
    const seen: boolean[] = [];
    const running = BatchHeartbeat.run(heartbeat, 1000, async (beat) => {
      seen.push(beat.failed);
      const result = await work.done;
      seen.push(beat.failed);
      return result;
    });
    const settled = running.catch((err: unknown) => err);
    await jest.advanceTimersByTimeAsync(2000);
    await jest.advanceTimersByTimeAsync(5000);
    work.finish('handled');
    expect(await settled).toBe(rebalancing);
    expect(seen).toEqual([false, true]);
    // After the first failure it stops asking: the member re-joins once the work returns.
    expect(heartbeat).toHaveBeenCalledTimes(2);
  });

  it("throws a heartbeat's failure in place of the work's error, which stopping for it likely caused", async () => {
    const heartbeat = jest.fn().mockRejectedValue(new Error('heartbeat failed'));
    const work = pendingWork();
    const running = BatchHeartbeat.run(heartbeat, 1000, () => work.done).catch((err: unknown) => err);
    await jest.advanceTimersByTimeAsync(1000);
    work.fail(new Error('stopped'));
    expect(((await running) as Error).message).toBe('heartbeat failed');
  });

  it("throws the work's error when every heartbeat held", async () => {
    const heartbeat = jest.fn(() => Promise.resolve());
    const work = pendingWork();
    const running = BatchHeartbeat.run(heartbeat, 1000, () => work.done).catch((err: unknown) => err);
    await jest.advanceTimersByTimeAsync(1000);
    work.fail(new Error('store down'));
    expect(((await running) as Error).message).toBe('store down');
  });
});
