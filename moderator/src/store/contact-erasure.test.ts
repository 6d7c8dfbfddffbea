import pino from 'pino';
import { ContactErasure } from './contact-erasure';

const DAY_MS = 86_400_000;

describe('ContactErasure', () => {
  afterEach(() => jest.useRealTimers());

  it('erases the past seven days on start, then each new day a minute after midnight, by day only', async () => {
    jest.useFakeTimers({ now: Date.UTC(2026, 4, 10, 15, 0) });
    const days: string[] = [];
    const erasure = new ContactErasure({
      erase: (day) => {
        days.push(day);
        return Promise.resolve(0);
      },
      log: pino({ level: 'silent' }),
    });
    erasure.start();
    await jest.advanceTimersByTimeAsync(0);
    expect(days).toEqual([
      '2026-05-04',
      '2026-05-05',
      '2026-05-06',
      '2026-05-07',
      '2026-05-08',
      '2026-05-09',
      '2026-05-10',
    ]);
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

  it('keeps going after a day whose erasure failed', async () => {
    jest.useFakeTimers({ now: Date.UTC(2026, 4, 10, 23, 59) });
    const days: string[] = [];
    const erasure = new ContactErasure({
      erase: (day) => {
        days.push(day);
        return day === '2026-05-10' ? Promise.reject(new Error('store away')) : Promise.resolve(1);
      },
      log: pino({ level: 'silent' }),
    });
    erasure.start();
    await jest.advanceTimersByTimeAsync(2 * 60_000);
    expect(days.slice(-2)).toEqual(['2026-05-10', '2026-05-11']);
    await erasure.stop();
  });
});
