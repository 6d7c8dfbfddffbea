import { ActivityGate } from '../activity-gate';
import { TextFirst, type PauseEnd, type TextFirstOptions } from './text-first';

/** A TextFirst on fake timers, with the signals it sends and the pauses it reports. */
function textFirst(options: Partial<TextFirstOptions> = {}) {
  const gate = new ActivityGate();
  const signals: string[] = [];
  const pauses: { ms: number; end: PauseEnd }[] = [];
  const yielder = new TextFirst({
    gate,
    lingerMs: 5,
    maxPausedMs: 500,
    windowMs: 1000,
    kill: (pid, signal) => signals.push(`${signal} ${pid}`),
    now: () => Date.now(),
    onPause: (ms, end) => pauses.push({ ms, end }),
    ...options,
  });
  return { gate, signals, pauses, yielder };
}

describe('TextFirst', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('stops the readers while text is in flight, however many calls, and continues them after the linger', () => {
    const { gate, signals, pauses, yielder } = textFirst();
    yielder.setReaders([11]);
    const first = gate.enter();
    const second = gate.enter();
    expect(signals).toEqual(['SIGSTOP 11']);
    expect(yielder.paused).toBe(true);
    jest.advanceTimersByTime(20);
    first();
    jest.advanceTimersByTime(20);
    expect(signals).toEqual(['SIGSTOP 11']);
    second();
    jest.advanceTimersByTime(4);
    expect(yielder.paused).toBe(true);
    jest.advanceTimersByTime(1);
    expect(signals).toEqual(['SIGSTOP 11', 'SIGCONT 11']);
    expect(pauses).toEqual([{ ms: 45, end: 'text_idle' }]);
    yielder.close();
  });

  it('stays stopped across a gap shorter than the linger, and continues at once with no linger', () => {
    const lingering = textFirst();
    lingering.yielder.setReaders([11]);
    lingering.gate.enter()();
    jest.advanceTimersByTime(3);
    const leave = lingering.gate.enter();
    jest.advanceTimersByTime(10);
    leave();
    jest.advanceTimersByTime(5);
    expect(lingering.signals).toEqual(['SIGSTOP 11', 'SIGCONT 11']);
    expect(lingering.pauses).toEqual([{ ms: 18, end: 'text_idle' }]);
    lingering.yielder.close();

    const eager = textFirst({ lingerMs: 0 });
    eager.yielder.setReaders([11]);
    eager.gate.enter()();
    expect(eager.signals).toEqual(['SIGSTOP 11', 'SIGCONT 11']);
    eager.yielder.close();
  });

  it('pauses nothing while no reading runs, and stops a reading that starts while text is in flight', () => {
    const { gate, signals, yielder } = textFirst();
    const leave = gate.enter();
    expect(signals).toEqual([]);
    expect(yielder.paused).toBe(false);
    yielder.setReaders([11]);
    expect(signals).toEqual(['SIGSTOP 11']);
    yielder.setReaders([11, 12]);
    expect(signals).toEqual(['SIGSTOP 11', 'SIGSTOP 12']);
    // 11's reading ended (its process was SIGKILLed over its budget): it is continued, 12 stays stopped.
    yielder.setReaders([12]);
    expect(signals).toEqual(['SIGSTOP 11', 'SIGSTOP 12', 'SIGCONT 11']);
    yielder.setReaders([]);
    expect(signals).toEqual(['SIGSTOP 11', 'SIGSTOP 12', 'SIGCONT 11', 'SIGCONT 12']);
    expect(yielder.paused).toBe(false);
    leave();
    yielder.close();
  });

  it('caps the paused time of each window: under a steady stream of text OCR runs the rest of every window', () => {
    const { gate, signals, pauses, yielder } = textFirst({ maxPausedMs: 300, windowMs: 1000 });
    yielder.setReaders([11]);
    const leave = gate.enter();
    jest.advanceTimersByTime(299);
    expect(yielder.paused).toBe(true);
    jest.advanceTimersByTime(1);
    expect(yielder.paused).toBe(false);
    expect(pauses).toEqual([{ ms: 300, end: 'share_cap' }]);
    // Text goes on (a new call enters as another leaves): no pause until the window ends.
    gate.enter();
    jest.advanceTimersByTime(699);
    expect(yielder.paused).toBe(false);
    jest.advanceTimersByTime(1);
    expect(yielder.paused).toBe(true);
    jest.advanceTimersByTime(300);
    expect(yielder.paused).toBe(false);
    expect(signals).toEqual(['SIGSTOP 11', 'SIGCONT 11', 'SIGSTOP 11', 'SIGCONT 11']);
    leave();
    yielder.close();
  });

  it('counts short pauses in the window, and a pause over the window end in the next window', () => {
    const short = textFirst({ lingerMs: 0, maxPausedMs: 300, windowMs: 1000 });
    short.yielder.setReaders([11]);
    const pauseFor = (ms: number) => {
      const leave = short.gate.enter();
      jest.advanceTimersByTime(ms);
      leave();
    };
    for (let n = 0; n < 5; n += 1) {
      pauseFor(50);
      jest.advanceTimersByTime(50);
    }
    // 250 ms paused of the window's 300: the next pause ends after 50 ms, and none starts again in this window.
    pauseFor(100);
    expect(short.pauses.at(-1)).toEqual({ ms: 50, end: 'share_cap' });
    jest.advanceTimersByTime(300);
    pauseFor(20);
    expect(short.pauses).toHaveLength(6);
    short.yielder.close();

    const spanning = textFirst({ lingerMs: 0, maxPausedMs: 300, windowMs: 1000 });
    spanning.yielder.setReaders([11]);
    spanning.gate.enter()();
    // Near the window's end (at 950 ms), a pause has 300 ms of the next window besides its 50 ms in this one.
    jest.advanceTimersByTime(950);
    const leave = spanning.gate.enter();
    jest.advanceTimersByTime(349);
    expect(spanning.yielder.paused).toBe(true);
    jest.advanceTimersByTime(1);
    expect(spanning.pauses.at(-1)).toEqual({ ms: 350, end: 'share_cap' });
    leave();
    spanning.yielder.close();
  });

  it('keeps the paused time, the running pause included, for a watchdog of wall time', () => {
    const { gate, yielder } = textFirst();
    yielder.setReaders([11]);
    expect(yielder.pausedMs()).toBe(0);
    const leave = gate.enter();
    jest.advanceTimersByTime(40);
    expect(yielder.pausedMs()).toBe(40);
    leave();
    jest.advanceTimersByTime(100);
    expect(yielder.pausedMs()).toBe(45);
    gate.enter()();
    jest.advanceTimersByTime(10);
    expect(yielder.pausedMs()).toBe(50);
    yielder.close();
  });

  it('continues the readers when closed, and stops listening to the gate', () => {
    const { gate, signals, pauses, yielder } = textFirst();
    yielder.setReaders([11]);
    const leave = gate.enter();
    jest.advanceTimersByTime(7);
    yielder.close();
    expect(signals).toEqual(['SIGSTOP 11', 'SIGCONT 11']);
    expect(pauses).toEqual([{ ms: 7, end: 'closed' }]);
    leave();
    gate.enter()();
    yielder.setReaders([11]);
    expect(signals).toEqual(['SIGSTOP 11', 'SIGCONT 11']);
  });

  it('takes a process that ended meanwhile in its stride', () => {
    const { gate, yielder } = textFirst({
      kill: () => {
        throw Object.assign(new Error('kill ESRCH'), { code: 'ESRCH' });
      },
    });
    yielder.setReaders([11]);
    const leave = gate.enter();
    expect(yielder.paused).toBe(true);
    leave();
    jest.advanceTimersByTime(5);
    expect(yielder.paused).toBe(false);
    yielder.close();
  });

  it('refuses a cap that is not below its window', () => {
    expect(() => textFirst({ maxPausedMs: 1000, windowMs: 1000 })).toThrow(/below the window/);
  });
});
