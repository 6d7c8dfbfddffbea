import { nextDelayMs, parseRetryAfter } from './retry-policy';

const schedule = [5, 300, 1800];

describe('nextDelayMs', () => {
  it.each([
    [1, 0.5, 5000],
    [2, 0.5, 300000],
    [3, 0.5, 1800000],
    [1, 0, 4250],
    [1, 0.999999, 5750],
  ])('after attempt %d with random %d waits %d ms', (attempts, random, expected) => {
    expect(nextDelayMs({ attempts, scheduleS: schedule, random })).toBe(expected);
  });

  it('gives up after the last scheduled retry', () => {
    expect(nextDelayMs({ attempts: 4, scheduleS: schedule, random: 0.5 })).toBeNull();
  });

  it('waits for Retry-After when it is later than the schedule, never earlier', () => {
    expect(nextDelayMs({ attempts: 1, scheduleS: schedule, random: 0.5, retryAfterMs: 60000 })).toBe(60000);
    expect(nextDelayMs({ attempts: 2, scheduleS: schedule, random: 0.5, retryAfterMs: 60000 })).toBe(300000);
  });
});

describe('parseRetryAfter', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  it.each([
    ['120', 120000],
    [' 3 ', 3000],
    ['Thu, 01 Jan 2026 00:00:30 GMT', 30000],
    ['Wed, 31 Dec 2025 23:00:00 GMT', 0],
    ['99999', 3600000],
  ])('reads %j as %d ms (cap 1 h)', (header, expected) => {
    expect(parseRetryAfter(header, now, 3600000)).toBe(expected);
  });

  it.each([[undefined], [''], ['soon'], ['-5']])('ignores %j', (header) => {
    expect(parseRetryAfter(header, now, 3600000)).toBeUndefined();
  });
});
