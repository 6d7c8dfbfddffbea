import { WakeablePause } from './wakeable-pause';

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

test('a pause ends when its time is up', async () => {
  const pause = new WakeablePause();
  let ended = false;
  const sleeping = pause.sleep(1000).then(() => (ended = true));
  await jest.advanceTimersByTimeAsync(999);
  expect(ended).toBe(false);
  await jest.advanceTimersByTimeAsync(1);
  await sleeping;
  expect(ended).toBe(true);
});

test('wake() ends the pause under way at once, and its timer with it', async () => {
  const pause = new WakeablePause();
  let ended = false;
  const sleeping = pause.sleep(60_000).then(() => (ended = true));
  pause.wake();
  await sleeping;
  expect(ended).toBe(true);
  expect(jest.getTimerCount()).toBe(0);
});

test('a wake with no pause under way does not cut the next one short', async () => {
  const pause = new WakeablePause();
  pause.wake();
  let ended = false;
  const sleeping = pause.sleep(1000).then(() => (ended = true));
  await jest.advanceTimersByTimeAsync(500);
  expect(ended).toBe(false);
  await jest.advanceTimersByTimeAsync(500);
  await sleeping;
  expect(ended).toBe(true);
});
