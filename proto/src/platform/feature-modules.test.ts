import pino from 'pino';
import { ModuleList, runReactions, type FeatureModule, type Reaction } from './feature-modules';

const silent = pino({ level: 'silent' });

function recording(name: string, calls: string[], overrides: Partial<FeatureModule> = {}): FeatureModule {
  return {
    name,
    start: () => {
      calls.push(`start ${name}`);
    },
    stopIntake: () => {
      calls.push(`stopIntake ${name}`);
    },
    drain: () => {
      calls.push(`drain ${name}`);
    },
    ...overrides,
  };
}

describe('ModuleList', () => {
  it('starts in list order and stops each phase in reverse order', async () => {
    const calls: string[] = [];
    const list = new ModuleList(silent, [recording('a', calls), recording('b', calls), { name: 'bare' }]);
    await list.start();
    await list.stopIntake();
    await list.drain();
    expect(calls).toEqual(['start a', 'start b', 'stopIntake b', 'stopIntake a', 'drain b', 'drain a']);
  });

  it('stops the other modules when one fails to stop, and logs which one', async () => {
    const calls: string[] = [];
    const errors: unknown[] = [];
    const log = pino({ level: 'error' }, { write: (line: string) => errors.push(JSON.parse(line)) });
    const failing = recording('stuck', calls, { stopIntake: () => Promise.reject(new Error('stuck')) });
    const list = new ModuleList(log, [recording('a', calls), failing, recording('c', calls)]);
    await list.stopIntake();
    expect(calls).toEqual(['stopIntake c', 'stopIntake a']);
    expect(errors).toEqual([
      expect.objectContaining({ module: 'stuck', phase: 'stopIntake', msg: 'feature module failed to stop' }),
    ]);
  });

  it('is ready when every module is, and never after intake stopped', async () => {
    let modelLoaded = false;
    const list = new ModuleList(silent, [{ name: 'plain' }, { name: 'model', ready: () => modelLoaded }]);
    expect(await list.ready()).toBe(false);
    modelLoaded = true;
    expect(await list.ready()).toBe(true);
    await list.stopIntake();
    expect(await list.ready()).toBe(false);
  });
});

describe('runReactions', () => {
  type Event = { type: 'A' | 'B' | 'C'; n: number };
  it('passes each reaction only the events of its types, and skips a reaction with none', async () => {
    const seen: Record<string, number[]> = {};
    const reaction = (name: string, types: Event['type'][]): Reaction<Event> => ({
      name,
      applicableEvents: types,
      react: (events) => {
        seen[name] = events.map((event) => event.n);
        return Promise.resolve();
      },
    });
    const run = runReactions([reaction('ab', ['A', 'B']), reaction('c', ['C'])]);
    await run([
      { type: 'A', n: 1 },
      { type: 'B', n: 2 },
      { type: 'A', n: 3 },
    ]);
    expect(seen).toEqual({ ab: [1, 2, 3] });
  });

  it('rejects when a reaction fails, after the others ran', async () => {
    const ran: string[] = [];
    const run = runReactions<{ type: 'A' }>([
      { name: 'fails', applicableEvents: ['A'], react: () => Promise.reject(new Error('counter down')) },
      {
        name: 'works',
        applicableEvents: ['A'],
        react: () => {
          ran.push('works');
          return Promise.resolve();
        },
      },
    ]);
    await expect(run([{ type: 'A' }])).rejects.toThrow('counter down');
    expect(ran).toEqual(['works']);
  });

  it('settles only once a slower reaction has ended, when another failed at once', async () => {
    let slowEnded = false;
    const run = runReactions<{ type: 'A' }>([
      { name: 'fails', applicableEvents: ['A'], react: () => Promise.reject(new Error('store down')) },
      {
        name: 'slow',
        applicableEvents: ['A'],
        react: async () => {
          for (let turn = 0; turn < 5; turn += 1) await new Promise((resolve) => setImmediate(resolve));
          slowEnded = true;
        },
      },
    ]);
    await expect(run([{ type: 'A' }])).rejects.toThrow('store down');
    expect(slowEnded).toBe(true);
  });
});
