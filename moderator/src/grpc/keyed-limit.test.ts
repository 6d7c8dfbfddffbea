import { TenantBusyError } from '../domain/errors';
import { KeyedLimit } from './keyed-limit';

/**
 * A task that runs until `finish` is called. `state.started` tells whether the limit let it start: a task admitted at
 * once starts within `run` (synchronously), a waiting one when `started` resolves. The limit decides whom to admit
 * synchronously too, so a task not started by then was not admitted.
 */
function gated(limit: KeyedLimit, key: string, options: { weight?: number; signal?: AbortSignal } = {}) {
  let finish!: () => void;
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const state = { started: false };
  const done = limit.run(
    key,
    () =>
      new Promise<void>((resolve) => {
        state.started = true;
        markStarted();
        finish = resolve;
      }),
    options,
  );
  return { state, started, done, finish: () => finish() };
}

describe('KeyedLimit', () => {
  it('holds one key to its capacity in units, weight by weight', async () => {
    const limit = new KeyedLimit({ capacity: 4 });
    const heavy = gated(limit, 'a', { weight: 3 });
    const light = gated(limit, 'a', { weight: 1 });
    const next = gated(limit, 'a', { weight: 2 });
    expect([heavy.state.started, light.state.started, next.state.started]).toEqual([true, true, false]);

    heavy.finish();
    await heavy.done;
    await next.started;
    light.finish();
    next.finish();
    await Promise.all([light.done, next.done]);
  });

  it('starts waiting tasks in arrival order: a light task does not overtake a heavy one at the head', async () => {
    const limit = new KeyedLimit({ capacity: 4 });
    const first = gated(limit, 'a', { weight: 2 });
    const heavy = gated(limit, 'a', { weight: 4 });
    const light = gated(limit, 'a', { weight: 1 });
    expect([first.state.started, heavy.state.started, light.state.started]).toEqual([true, false, false]);

    first.finish();
    await heavy.started;
    expect(light.state.started).toBe(false);
    heavy.finish();
    await light.started;
    light.finish();
    await Promise.all([first.done, heavy.done, light.done]);
  });

  it('counts a weight above the capacity as the whole capacity, so the task still runs', async () => {
    const limit = new KeyedLimit({ capacity: 2 });
    const huge = gated(limit, 'a', { weight: 50 });
    expect(huge.state.started).toBe(true);
    huge.finish();
    await huge.done;
  });

  it('keeps keys apart: one key at its capacity does not hold another', async () => {
    const limit = new KeyedLimit({ capacity: 1 });
    const a = gated(limit, 'a');
    const a2 = gated(limit, 'a');
    const b = gated(limit, 'b');
    expect([a.state.started, a2.state.started, b.state.started]).toEqual([true, false, true]);
    a.finish();
    b.finish();
    await a2.started;
    a2.finish();
    await Promise.all([a.done, a2.done, b.done]);
  });

  it('refuses a task beyond maxWaiting with TenantBusyError', async () => {
    const limit = new KeyedLimit({ capacity: 1, maxWaiting: 1 });
    const running = gated(limit, 'a');
    const waiting = gated(limit, 'a');
    await expect(limit.run('a', () => Promise.resolve('never'))).rejects.toBeInstanceOf(TenantBusyError);
    running.finish();
    await waiting.started;
    waiting.finish();
    await Promise.all([running.done, waiting.done]);
  });

  it('drops a waiting task whose signal aborts, with the reason, and starts the next', async () => {
    const limit = new KeyedLimit({ capacity: 2 });
    const running = gated(limit, 'a', { weight: 1 });
    const controller = new AbortController();
    const aborted = gated(limit, 'a', { weight: 2, signal: controller.signal });
    const behind = gated(limit, 'a', { weight: 1 });
    expect([aborted.state.started, behind.state.started]).toEqual([false, false]);

    const reason = new Error('caller gone');
    controller.abort(reason);
    await expect(aborted.done).rejects.toBe(reason);
    await behind.started;
    expect(aborted.state.started).toBe(false);
    running.finish();
    behind.finish();
    await Promise.all([running.done, behind.done]);
  });

  describe('sharedWindowMs', () => {
    afterEach(() => jest.useRealTimers());

    it('does not hold back a key alone, and holds it to its capacity while another key is active', async () => {
      jest.useFakeTimers();
      const limit = new KeyedLimit({ capacity: 1, sharedWindowMs: 1000 });
      const alone = [gated(limit, 'a'), gated(limit, 'a')];
      expect(alone.map((task) => task.state.started)).toEqual([true, true]);

      limit.touch('b');
      const shared = gated(limit, 'a');
      expect(shared.state.started).toBe(false);

      // The other key's activity ages out of the window: the waiting task starts when the key's next task ends.
      jest.advanceTimersByTime(1001);
      alone[0]!.finish();
      await shared.started;
      alone[1]!.finish();
      shared.finish();
      await Promise.all([...alone.map((task) => task.done), shared.done]);
    });
  });
});
