import pino from 'pino';
import { ContactErasure } from './contact-erasure';

const DAY_MS = 86_400_000;

/** An erasure over an in-memory stored day; `fail` names days whose delete fails once. */
function erasureWith(options: { through?: string; oldest?: string; fail?: string[] }) {
  const days: string[] = [];
  const failing = new Set(options.fail);
  const state = { through: options.through };
  const erasure = new ContactErasure({
    erase: (day) => {
      days.push(day);
      return failing.delete(day) ? Promise.reject(new Error('store away')) : Promise.resolve(0);
    },
    erasedThrough: () => Promise.resolve(state.through),
    markErasedThrough: (day) => {
      state.through = day;
      return Promise.resolve();
    },
    oldestDue: () => Promise.resolve(options.oldest),
    log: pino({ level: 'silent' }),
  });
  return { erasure, days, state };
}

describe('ContactErasure', () => {
  afterEach(() => jest.useRealTimers());

  it('erases every day since the last erased on start, then each new day a minute after midnight', async () => {
    jest.useFakeTimers({ now: Date.UTC(2026, 4, 10, 15, 0) });
    // Stopped for three weeks: every missed day is erased, not only the last few.
    const { erasure, days, state } = erasureWith({ through: '2026-04-18' });
    erasure.start();
    await jest.advanceTimersByTimeAsync(0);
    expect(days).toHaveLength(22);
    expect(days[0]).toBe('2026-04-19');
    expect(days.at(-1)).toBe('2026-05-10');
    expect(state.through).toBe('2026-05-10');
    days.length = 0;
    // Nothing until the day turns: an idle stack costs one timer.
    await jest.advanceTimersByTimeAsync(9 * 60 * 60 * 1000);
    expect(days).toEqual([]);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(days).toEqual(['2026-05-11']);
    await jest.advanceTimersByTimeAsync(DAY_MS);
    expect(days).toEqual(['2026-05-11', '2026-05-12']);
    await erasure.stop();
    await jest.advanceTimersByTimeAsync(2 * DAY_MS);
    expect(days).toEqual(['2026-05-11', '2026-05-12']);
  });

  it('starts from the oldest contact due when nothing was erased yet, and from today when none is stored', async () => {
    jest.useFakeTimers({ now: Date.UTC(2026, 4, 10, 15, 0) });
    const old = erasureWith({ oldest: '2025-05-10' });
    old.erasure.start();
    await jest.advanceTimersByTimeAsync(0);
    expect(old.days).toHaveLength(366);
    expect(old.days[0]).toBe('2025-05-10');
    await old.erasure.stop();
    const none = erasureWith({});
    none.erasure.start();
    await jest.advanceTimersByTimeAsync(0);
    expect(none.days).toEqual(['2026-05-10']);
    await none.erasure.stop();
  });

  it('tries a day whose erasure failed again at the next pass', async () => {
    jest.useFakeTimers({ now: Date.UTC(2026, 4, 10, 23, 59) });
    const { erasure, days, state } = erasureWith({ through: '2026-05-08', fail: ['2026-05-10'] });
    erasure.start();
    await jest.advanceTimersByTimeAsync(0);
    expect(days).toEqual(['2026-05-09', '2026-05-10']);
    expect(state.through).toBe('2026-05-09');
    await jest.advanceTimersByTimeAsync(2 * 60_000);
    expect(days.slice(2)).toEqual(['2026-05-10', '2026-05-11']);
    await erasure.stop();
  });
});
